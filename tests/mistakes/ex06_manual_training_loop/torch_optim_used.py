# Mistake: uses torch.optim.SGD inside train_step, which the statement rules out.
# Expect: without torch.optim

import torch

LR = 0.01  # x spreads like randn * 5: dL/dw is about 50 times larger than dL/db


def train_step(x, y, w, b, lr):
    y_pred = w * x + b
    loss = ((y_pred - y) ** 2).mean()
    optimizer = torch.optim.SGD([w, b], lr=lr)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def train(x, y, epochs):
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        losses.append(train_step(x, y, w, b, LR))
    return w, b, losses
