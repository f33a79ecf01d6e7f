# Mistake: train_step is right, but train writes its own loop that adds the gradient: the loss grows
# with a learning rate that is fine, so the message must blame the sign, not the learning rate.
# Expect: uphill

import torch

LR = 0.01


def train_step(x, y, w, b, lr):
    loss = ((w * x + b - y) ** 2).mean()
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
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w += LR * w.grad
            b += LR * b.grad
        w.grad.zero_()
        b.grad.zero_()
        losses.append(loss.item())
    return w, b, losses
