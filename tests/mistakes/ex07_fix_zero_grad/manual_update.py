# Mistake: updates the parameters by hand under no_grad instead of calling optimizer.step() (they do change).
# Expect: never called optimizer.step(): the loop must update the parameters through its optimizer

import torch
from torch import nn


def train_regression(model: nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float, epochs: int) -> list:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses.append(loss.item())
    return losses


def train_classifier(model: nn.Module, x: torch.Tensor, labels: torch.Tensor, lr: float, epochs: int) -> list:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
