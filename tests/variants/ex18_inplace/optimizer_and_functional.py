"""A correct variant: torch.optim.SGD for the update, torch.nn.functional for the activations."""

import torch
import torch.nn.functional as F


def sgd_update(params, lr):
    torch.optim.SGD(params, lr=lr).step()  # step() runs under no_grad and bumps the version counters


def swish(x):
    return F.silu(x)


def residual_tanh(x, w):
    return x + F.linear(x, w.t()).tanh()
