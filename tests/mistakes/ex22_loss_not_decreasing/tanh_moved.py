# Mistake: rewrites make_body while removing the freezing loop and puts the Tanh first: the body now squashes
# the input and runs two Linear layers in a row. The loss still goes down, but this is not the architecture.
# Expect: a Tanh runs before it
import torch
from torch import nn


def make_body(in_features, hidden):
    return nn.Sequential(nn.Tanh(), nn.Linear(in_features, hidden), nn.Linear(hidden, hidden), nn.Tanh())


def fit(x, y, hidden, lr, epochs):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    model.append(nn.Linear(hidden, y.shape[1]))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
