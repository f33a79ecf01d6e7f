# Mistake: the activation's saved output is changed in place afterwards (sigmoid saves its output for backward).
# Expect: modified by an inplace operation

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def swish(x):
    s = torch.sigmoid(x)
    s *= x
    return s


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
