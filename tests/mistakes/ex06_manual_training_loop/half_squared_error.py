# Mistake: the loss is half the mean squared error (a 1/2 some textbooks use), so every step is half as long.
# Expect: no 1/2

import torch

LR = 0.02


def train_step(x, y, w, b, lr):
    loss = 0.5 * ((w * x + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
