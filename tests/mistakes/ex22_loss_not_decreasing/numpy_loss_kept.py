# Mistake: unfreezes the layer and builds the optimizer after the head, but keeps the loss computed in NumPy
# and wrapped again with torch.tensor(..., requires_grad=True): a new leaf, the graph is cut.
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
        err = model(x).detach().numpy() - y.numpy()
        loss = torch.tensor((err ** 2).mean(), requires_grad=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses
