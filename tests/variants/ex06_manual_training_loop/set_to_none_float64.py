"""A correct variant: grads set to None, copy_ update, the loss as a float through .tolist(), float64
parameters in train."""

import torch

LR = 0.008


def train_step(x, y, w, b, lr):
    residual = (w * x + b) - y
    loss = (residual * residual).sum() / x.shape[0]
    loss.backward()
    with torch.no_grad():
        w.copy_(w - lr * w.grad)
        b.copy_(b - lr * b.grad)
    w.grad = None
    b.grad = None
    return loss.detach().tolist()


def train(x, y, epochs):
    params = [torch.zeros(1, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    w, b = params
    x, y = x.double(), y.double()
    losses = [train_step(x, y, w, b, lr=LR) for _ in range(epochs)]
    return w, b, losses
