"""ex07 - Fix the training loops: where does zero_grad go?

Both functions below train a model with torch.optim.SGD on the whole batch, once per epoch, and return
the loss of every epoch. Both are buggy.
train_regression: its loss swings up and down instead of going down.
train_classifier: its loss does not move at all.
Find the bug in each loop and fix it, changing as little as you can (keep the model, the loss function, the
optimizer and lr as they are).

Run `grade ex07` to check your fix.
"""

import torch
from torch import nn


def train_regression(model: nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float, epochs: int) -> list:
    """Fit `model` to (x, y) with the mean squared error; return the list of the losses, one per epoch."""
    # TODO: the loss swings instead of going down. Find the bug in this loop and fix it.
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(epochs):
        pred = model(x)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train_classifier(model: nn.Module, x: torch.Tensor, labels: torch.Tensor, lr: float, epochs: int) -> list:
    """Fit `model` (logits) to the class labels with the cross-entropy; return the losses, one per epoch."""
    # TODO: the loss never moves. Find the bug in this loop and fix it.
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(epochs):
        logits = model(x)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3
    print("regression:", [round(v, 3) for v in train_regression(nn.Linear(3, 1), x, y, lr=0.1, epochs=40)[::8]])
    labels = (x @ torch.randn(3, 3)).argmax(dim=1)
    clf = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 3))
    print("classifier:", [round(v, 3) for v in train_classifier(clf, x, labels, lr=0.5, epochs=40)[::8]])
