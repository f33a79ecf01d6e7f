# Mistake: freezes everything right but drops momentum=0.9: the head learns another way than asked.
# Expect: while the head trained with SGD(lr=0.1, momentum=0.9)
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        model.backbone.eval()
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
