# Variant: statistic=mean
"""A correct variant: squeeze with a named dim, unsqueeze, torch.sub/torch.square, linalg.vecdot."""

import torch


def mse(y_pred, y):
    if y_pred.dim() == 2:
        y_pred = y_pred.squeeze(-1)  # only the feature axis: N = 1 keeps its batch axis
    if y.dim() == 2:
        y = y.squeeze(-1)
    return torch.square(torch.sub(y_pred, y)).mean()


def center_rows(x):
    return x - x.mean(dim=1).unsqueeze(1)


def pairwise_sq_dists(a, b):
    return torch.square(a.unsqueeze(1) - b.unsqueeze(0)).sum(dim=2)


def rowwise_dot(a, b):
    return torch.linalg.vecdot(a, b, dim=1)
