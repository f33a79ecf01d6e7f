# Mistake: subtracts the mean of the whole matrix instead of each row's own mean.
# Expect: the mean of all of x

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean()


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
