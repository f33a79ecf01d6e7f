# Mistake: w = w - lr * w.grad outside no_grad: w becomes a non-leaf tensor whose .grad is None.
# Expect: no longer a leaf

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    w = w - lr * w.grad
    b = b - lr * b.grad
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

