# Mistake: steps between the forward pass and backward: the step changes the weights in place that the forward
# pass saved for backward, and backward stops with autograd's RuntimeError.
# Expect: step changes the weights in place
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
        optimizer.step()  # "apply last iteration's gradients, then compute new ones"
        optimizer.zero_grad()
        loss.backward()
        losses.append(loss.item())
    return losses
