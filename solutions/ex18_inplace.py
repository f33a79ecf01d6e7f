"""Reference solution of ex18 (in-place operations that autograd accepts)."""

import torch


def sgd_update(params, lr):
    # The update is not part of the model: no_grad lets a leaf change in place. Unlike .data, it still bumps
    # the version counter, so a graph that saved the old value raises rather than silently using the new one.
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad  # in place: the same tensor objects the model holds, still leaves


def swish(x):
    return x * torch.sigmoid(x)  # out of place: sigmoid's output stays as backward saved it


def residual_tanh(x, w):
    h = torch.tanh(x @ w)
    return h + x  # a new tensor; tanh's saved output is left untouched
