"""Reference solution of ex26: the backbone frozen and in eval mode, SGD over the trainable parameters only."""

import torch
from torch import nn


def fine_tune(model: nn.Module, batches: list, lr: float, epochs: int) -> list:
    model.backbone.requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
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
