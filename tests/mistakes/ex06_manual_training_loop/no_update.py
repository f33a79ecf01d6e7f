# Mistake: forward, backward and zeroing are there, but the update step itself is missing.
# Expect: did not change the w it was given

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
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
