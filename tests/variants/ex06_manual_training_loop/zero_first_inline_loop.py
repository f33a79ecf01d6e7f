"""A correct variant: zeroes at the start of the step (guarded), in-place sub_, F.mse_loss, float(loss);
train writes its own loop with w.grad = None instead of calling train_step."""

import torch
import torch.nn.functional as F

LR = 0.02


def train_step(x, y, w, b, lr):
    for p in (w, b):
        if p.grad is not None:
            p.grad.zero_()
    loss = F.mse_loss(x * w + b, y)
    loss.backward()
    with torch.no_grad():
        w.sub_(lr * w.grad)
        b.sub_(lr * b.grad)
    return float(loss)


def train(x, y, epochs):
    w = torch.zeros(1).requires_grad_()
    b = torch.zeros(1).requires_grad_()
    losses = []
    for _ in range(epochs):
        loss = torch.mean(torch.square(w * x + b - y))
        loss.backward()
        with torch.no_grad():
            for p in (w, b):
                p -= LR * p.grad
                p.grad = None
        losses.append(loss.item())
    return w, b, losses
