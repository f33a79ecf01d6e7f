# Mistake: keeps the per-row Python loop of torch.dot calls that the exercise asks to vectorize.
# Expect: loop

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    result = torch.zeros(a.shape[0])
    for i in range(a.shape[0]):
        result[i] = torch.dot(a[i], b[i])
    return result
