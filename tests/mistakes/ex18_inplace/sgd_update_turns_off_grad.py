# Mistake: silences the leaf error by switching requires_grad off, and never switches it back.
# Expect: no longer requires grad

import torch


def sgd_update(params, lr):
    for p in params:
        p.requires_grad_(False)
        p -= lr * p.grad


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
