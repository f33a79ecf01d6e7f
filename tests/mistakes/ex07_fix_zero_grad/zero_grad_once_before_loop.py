# Mistake: calls zero_grad once, before the loop, believing that is enough.
# Expect: not cleared in every iteration

import torch
from torch import nn


def train_regression(model, x, y, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    optimizer.zero_grad()
    for epoch in range(epochs):
        pred = model(x)
        loss = loss_fn(pred, y)
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
        logits = model(x)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses

