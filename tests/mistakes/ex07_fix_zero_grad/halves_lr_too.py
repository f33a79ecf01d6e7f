# Mistake: fixes both loops, but also halves the regression's learning rate "to be safe", so the training no
# longer matches the SGD the statement asks for (keep lr as it is).
# Expect: while correct full-batch SGD gives

import torch
from torch import nn


def train_regression(model, x, y, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr / 2)
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train_classifier(model, x, labels, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = loss_fn(model(x), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
