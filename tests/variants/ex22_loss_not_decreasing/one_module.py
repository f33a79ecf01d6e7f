# A module class of its own instead of Sequential.append; nn.MSELoss; model.zero_grad().
import torch
from torch import nn


def make_body(in_features, hidden):
    return nn.Sequential(nn.Linear(in_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())


class Net(nn.Module):
    def __init__(self, body, head):
        super().__init__()
        self.body, self.head = body, head

    def forward(self, x):
        return self.head(self.body(x))


def fit(x, y, hidden, lr, epochs):
    model = Net(make_body(x.shape[1], hidden), nn.Linear(hidden, y.shape[1]))
    optimizer = torch.optim.SGD(list(model.parameters()), lr=lr)
    criterion = nn.MSELoss()
    losses = []
    for _ in range(epochs):
        model.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
