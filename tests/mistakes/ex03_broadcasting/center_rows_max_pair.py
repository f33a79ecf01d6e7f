# Mistake: x.max(dim=1, keepdim=True) returns a pair (values, indices), not a tensor: the subtraction raises.
# Variant: statistic=max
# Expect: returns a pair
import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.max(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
