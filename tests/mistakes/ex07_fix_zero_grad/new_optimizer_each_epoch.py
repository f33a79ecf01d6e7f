# Mistake: creates a new optimizer every epoch, believing that resets the gradients: .grad lives on the parameters.
# Expect: a new optimizer in every iteration

import torch
from torch import nn


def train_regression(model, x, y, lr, epochs):
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(epochs):
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
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

