"""A correct variant: add_ with alpha=-lr, gradients dropped with `p.grad = None` after the update, the
parameters in a tuple, the loss from torch.nn.functional.mse_loss, LR a little larger."""

import torch
import torch.nn.functional as F

LR = 0.012


def train_step(x, y, w, b, lr):
    loss = F.mse_loss(torch.addcmul(b, w, x), y)
    loss.backward()
    with torch.no_grad():
        for p in (w, b):
            p.add_(p.grad, alpha=-lr)
            p.grad = None
    return loss.item()


def train(x, y, epochs):
    w, b = (torch.zeros(1, requires_grad=True) for _ in range(2))
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
