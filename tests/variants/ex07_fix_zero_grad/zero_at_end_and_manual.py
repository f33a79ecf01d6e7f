"""A correct variant: zero_grad after step at the end of the iteration (regression), and clearing
p.grad by hand (classifier); functional losses; loss values collected with float()."""

import torch
import torch.nn.functional as F
from torch import nn


def train_regression(model: nn.Module, x, y, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))
    return losses


def train_classifier(model: nn.Module, x, labels, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
