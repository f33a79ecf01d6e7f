# Mistake: x.sigmoid_() overwrites the input x (and fails on a leaf that requires grad).
# Expect: changed its input

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def swish(x):
    return x * x.sigmoid_()


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
