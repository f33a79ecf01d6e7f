# Variant: statistic=mean
"""A correct variant: squeeze, expand, torch.vmap over torch.dot (a vectorized map, not a Python loop)."""

import torch


def mse(y_pred, y):
    if y_pred.dim() == 2:
        y_pred = y_pred.squeeze(1)
    if y.dim() == 2:
        y = y.squeeze(1)
    return ((y_pred - y) ** 2).mean()


def center_rows(x):
    means = x.mean(dim=-1, keepdim=True).expand_as(x)
    return x - means


def pairwise_sq_dists(a, b):
    n, m = a.shape[0], b.shape[0]
    diff = a.unsqueeze(1).expand(n, m, -1) - b.unsqueeze(0).expand(n, m, -1)
    return diff.pow(2).sum(-1)


def rowwise_dot(a, b):
    return torch.vmap(torch.dot)(a, b)
