# Mistake: updates w and b in place without torch.no_grad(), so autograd refuses the in-place change of a leaf.
# Expect: with torch.no_grad()

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
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

