# Mistake: sums with keepdim=True, then squeeze() without a dim: for a single row the batch axis goes too.
# Expect: squeeze() without a dim

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1, keepdim=True).squeeze()  # [N, 1] -> [N], but [1, 1] -> []
