# Attack: linear_grads never returns (predict and mse_loss are right).
import torch


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    while True:
        pass
