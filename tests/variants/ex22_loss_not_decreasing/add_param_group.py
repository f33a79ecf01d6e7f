# Keeps the optimizer where it was and hands it the head with add_param_group; unfreezes with requires_grad_.
import torch
from torch import nn
import torch.nn.functional as F


def make_body(in_features, hidden):
    body = nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
    body.requires_grad_(True)
    return body


def fit(x, y, hidden, lr, epochs):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    head = nn.Linear(hidden, y.shape[1])
    model.append(head)
    optimizer.add_param_group({"params": head.parameters()})
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x), y, reduction="mean")
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return model, losses
