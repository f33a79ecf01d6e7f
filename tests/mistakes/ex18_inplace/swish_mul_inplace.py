# Mistake: multiplies the sigmoid output in place with `*=`, but sigmoid saved that output for backward.
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
