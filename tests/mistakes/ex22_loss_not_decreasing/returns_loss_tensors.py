# Mistake: fixes all three bugs but collects the loss tensors instead of floats.
# Expect: should return Python floats
import torch
from torch import nn


def make_body(in_features, hidden):
    return nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())


def fit(x, y, hidden, lr, epochs):
    model = nn.Sequential(make_body(x.shape[1], hidden), nn.Linear(hidden, y.shape[1]))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return model, losses
