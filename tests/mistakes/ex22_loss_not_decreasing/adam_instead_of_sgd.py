# Mistake: fixes the three bugs but also swaps the file's SGD for Adam (it trains, but it is not the training asked).
# Expect: fit trains with `Adam`
import torch
from torch import nn


def make_body(in_features: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())


def fit(x: torch.Tensor, y: torch.Tensor, hidden: int, lr: float, epochs: int):
    model = nn.Sequential(make_body(x.shape[1], hidden))
    model.append(nn.Linear(hidden, y.shape[1]))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
