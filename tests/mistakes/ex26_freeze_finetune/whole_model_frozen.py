# Mistake: freezes the whole model, head included: the loss has no graph and backward raises.
# Expect: is the head frozen too
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.requires_grad_(False)
    optimizer = torch.optim.SGD(model.head.parameters(), lr=lr, momentum=0.9)
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
