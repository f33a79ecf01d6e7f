# Mistake: creates w and b as 0-d tensors (shape []) instead of shape [1].
# Expect: shape [1]

import torch

LR = 0.01  # x spreads like randn * 5: dL/dw is about 50 times larger than dL/db


def train_step(x, y, w, b, lr):
    y_pred = w * x + b
    loss = ((y_pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros((), requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
