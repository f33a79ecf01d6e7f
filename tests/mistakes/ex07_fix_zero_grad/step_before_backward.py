# Mistake: reorders the classifier loop to zero_grad -> step -> backward: step always runs on cleared gradients.
# Expect: before loss.backward()

import torch
from torch import nn


def train_regression(model, x, y, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(epochs):
        optimizer.zero_grad()
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
        logits = model(x)
        loss = loss_fn(logits, labels)
        optimizer.zero_grad()
        optimizer.step()
        loss.backward()
        losses.append(loss.item())
    return losses
