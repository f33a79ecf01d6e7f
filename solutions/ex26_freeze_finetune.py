"""Reference solution of ex26: the backbone frozen and in eval mode, SGD over the trainable parameters only."""

import torch
from torch import nn


def fine_tune(model: nn.Module, batches: list, lr: float, epochs: int) -> list:
    # requires_grad_(False) sets the flag on every parameter of the backbone (setting the attribute
    # model.backbone.requires_grad would freeze nothing): no gradient reaches them.
    model.backbone.requires_grad_(False)
    # The trainable parameters only: the optimizer keeps no state for the backbone, and cannot move it.
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        # Freezing stops gradients, not BatchNorm: in train mode it would overwrite the backbone's running
        # statistics at every forward. The head trains, the backbone runs in eval mode, set after model.train().
        model.train()
        model.backbone.eval()
        for x, labels in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
