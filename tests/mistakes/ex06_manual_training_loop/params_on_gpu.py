# Mistake: creates w and b on the GPU when there is one, while x and y arrive on the CPU.
# Expect: With a GPU present

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
    w = torch.zeros(1, requires_grad=True, device="cuda" if torch.cuda.is_available() else "cpu")
    b = torch.zeros(1, requires_grad=True, device="cuda" if torch.cuda.is_available() else "cpu")
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
