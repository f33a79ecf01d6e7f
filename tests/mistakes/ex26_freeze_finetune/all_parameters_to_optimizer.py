# Mistake: freezes the backbone correctly, but hands every parameter to the optimizer.
# Expect: also holds the frozen backbone's parameters
import torch
from torch import nn


def fine_tune(model, batches, lr, epochs):
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
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
