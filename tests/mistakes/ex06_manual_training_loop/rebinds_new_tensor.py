# Mistake: writes w = w - lr * w.grad (under no_grad): a new local tensor, the caller's w never moves.
# Expect: in place

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    if w.grad is not None:
        w.grad.zero_()
        b.grad.zero_()
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w = w - lr * w.grad
        b = b - lr * b.grad
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses

