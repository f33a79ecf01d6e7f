"""Reference solution of ex07: zero_grad once per iteration, before backward, then step."""

import torch
from torch import nn


def train_regression(model: nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float, epochs: int) -> list:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for _ in range(epochs):
        # The bug: without this, backward() added each epoch's gradient to all the earlier ones, so the steps grew
        # and overshot. Clearing once per iteration, before backward, leaves only this epoch's gradient.
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # a float: a loss tensor would keep this iteration's graph alive
    return losses


def train_classifier(model: nn.Module, x: torch.Tensor, labels: torch.Tensor, lr: float, epochs: int) -> list:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        # The bug: zero_grad sat between backward and step, so every step used zero gradients. It belongs
        # before backward: the order is zero_grad, forward, backward, step.
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
