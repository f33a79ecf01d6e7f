# Mistake: flattens correctly but sums the squared errors instead of averaging them.
# Expect: a sum where the mean belongs

import torch


def mse(y_pred, y):
    return ((y_pred.view(-1) - y.view(-1)) ** 2).sum()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
