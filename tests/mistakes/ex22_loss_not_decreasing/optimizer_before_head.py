# Mistake: fixes the loss and the frozen layer, but still creates the optimizer before appending the head:
# the head gets gradients but never moves.
# Expect: not in any optimizer that steps
import torch
from torch import nn


def make_body(in_features, hidden):
    return nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())


def fit(x, y, hidden, lr, epochs):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model.append(nn.Linear(hidden, y.shape[1]))
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
