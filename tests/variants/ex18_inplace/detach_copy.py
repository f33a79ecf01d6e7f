"""A correct variant: update through .detach() (which, unlike .data, shares the version counter) and copy_."""

import torch


def sgd_update(params, lr):
    for p in params:
        new = (p - lr * p.grad).detach()
        p.detach().copy_(new)


def swish(x):
    return x / (1 + torch.exp(-x))


def residual_tanh(x, w):
    return torch.add(torch.tanh(x.mm(w)), x)
