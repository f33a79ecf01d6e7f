# Mistake: the row means lose their axis ([N]) and broadcast along the columns instead of the rows.
# Expect: keepdim=True

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
