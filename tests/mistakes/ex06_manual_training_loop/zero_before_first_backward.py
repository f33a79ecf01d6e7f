# Mistake: calls w.grad.zero_() at the start of the step, but before the first backward w.grad is None.
# Expect: None until the first backward

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    y_pred = w * x + b
    loss = torch.mean((y_pred - y) ** 2)
    w.grad.zero_()
    b.grad.zero_()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses

