# Mistake: adds zero_grad to train_regression right after backward (as the classifier had it): step gets no gradients.
# Expect: between backward and step

import torch
from torch import nn


def train_regression(model, x, y, lr, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    for epoch in range(epochs):
        pred = model(x)
        loss = loss_fn(pred, y)
        loss.backward()
        model.zero_grad()
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

