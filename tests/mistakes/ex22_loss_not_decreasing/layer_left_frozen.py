# Mistake: fixes the loss and the optimizer, but leaves the first layer frozen (copied from a fine-tuning script).
# Expect: requires_grad=False
import torch
from torch import nn


def make_body(in_features, hidden):
    body = nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
    for p in body[0].parameters():
        p.requires_grad = False
    return body


def fit(x, y, hidden, lr, epochs):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    model.append(nn.Linear(hidden, y.shape[1]))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
