# Mistake: subtracts a [N] prediction from a [N, 1] target directly, which broadcasts to [N, N].
# Expect: broadcasts to [

import torch


def mse(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
