# Mistake: converts to Python lists and loops over the numbers: few torch calls, but still a loop.
# Expect: loop

import torch


def mse(y_pred, y):
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x):
    return x - x.mean(dim=1, keepdim=True)


def pairwise_sq_dists(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=-1)


def rowwise_dot(a, b):
    rows_a, rows_b = a.tolist(), b.tolist()
    return torch.tensor([sum(p * q for p, q in zip(ra, rb)) for ra, rb in zip(rows_a, rows_b)])
