"""Reference solution of ex22: no frozen layer, the optimizer made once the model is complete, the loss
computed with torch operations on the model's output."""

import torch
from torch import nn


def make_body(in_features: int, hidden: int) -> nn.Module:
    # Bug 1: the first Linear was frozen (requires_grad=False), a step from fine-tuning that does not belong
    # in training from scratch. Every layer now learns.
    return nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())


def fit(x: torch.Tensor, y: torch.Tensor, hidden: int, lr: float, epochs: int):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    model.append(nn.Linear(hidden, y.shape[1]))
    # Bug 2: the optimizer was made before the head was added, and model.parameters() was read then: the
    # head was never updated. Made once the model is complete, it holds every parameter.
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        # Bug 3: the loss was rebuilt from NumPy numbers, a new leaf with no link to the model, so backward
        # reached no parameter. Torch operations on model(x) keep the graph from the loss back to every weight.
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
