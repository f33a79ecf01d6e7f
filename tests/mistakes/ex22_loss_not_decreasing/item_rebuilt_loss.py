# Mistake: computes the loss with torch, then rebuilds it from loss.item() "to get a clean scalar": the new
# tensor has no history, so backward stops there (tutorial 000 section 4.2: the graph cut by .item()).
# Expect: cut the graph
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
        value = nn.functional.mse_loss(model(x), y).item()
        loss = torch.tensor(value, requires_grad=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
