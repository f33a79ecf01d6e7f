# Mistake: uses torch.cdist, which gives distances, and forgets to square them.
# Expect: not squared distances

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return torch.cdist(a, b)


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
