# Mistake: adds a batch axis for torch.cdist, then squeeze() without a dim: with N = 1 the row axis goes too.
# Expect: squeeze() without a dim

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    d = torch.cdist(a.unsqueeze(0), b.unsqueeze(0))  # [1, N, M]
    return d.squeeze() ** 2


def rowwise_dot(a, b):
    return (a * b).sum(dim=1)
