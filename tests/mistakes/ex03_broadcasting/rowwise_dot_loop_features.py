# Mistake: vectorizes over the rows but loops over the features in Python, one column product at a time.
# Expect: runs over the features

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    result = torch.zeros(a.shape[0])
    for j in range(a.shape[1]):
        result = result + a[:, j] * b[:, j]
    return result
