# Attack: linear_grads tries to allocate 64 GiB.
import torch


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    big = torch.ones(8 << 30, dtype=torch.float64)
    return big[:1], big[:1]
