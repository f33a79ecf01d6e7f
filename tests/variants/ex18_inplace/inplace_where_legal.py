"""A correct variant: in-place ops where they are legal (sub_ under no_grad, tanh_ on a matmul output
that nothing saved, add_ on a fresh product), float64-safe, other styles."""

import torch


@torch.no_grad()
def sgd_update(params, lr):
    for p in params:
        p.sub_(p.grad, alpha=lr)


def swish(x):
    return torch.sigmoid(x).mul(x)


def residual_tanh(x, w):
    h = torch.matmul(x, w)
    h.tanh_()  # legal: matmul does not save its output, and tanh_ saves the new value
    return h.add(x)
