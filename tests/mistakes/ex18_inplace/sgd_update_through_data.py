# Mistake: updates the parameters through .data (the seed tutorial's "w.data -= lr * w.grad"), which hides the change from autograd's version check.
# Expect: .data

import torch


def sgd_update(params, lr):
    for p in params:
        p.data -= lr * p.grad


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
