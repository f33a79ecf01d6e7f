# Mistake: detaches the prediction and asks it to require grad again (to silence the numpy() error): the loss
# has a graph, but it starts at the detached copy, so no parameter gets a gradient.
# Expect: does not lead back to them
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
        pred = model(x).detach().requires_grad_()
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
