# Mistake: y_pred = x @ w + b has shape [N] (w is [1]); y_pred - y then broadcasts to [N, N].
# Expect: broadcasts to [N, N]

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    y_pred = x @ w + b
    loss = ((y_pred - y) ** 2).mean()
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
