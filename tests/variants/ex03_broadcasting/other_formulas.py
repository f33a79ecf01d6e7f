# Variant: statistic=mean
"""A correct variant: other formulas (F.mse_loss, [:, None], the |a|^2 + |b|^2 - 2ab expansion, einsum)."""

import torch
import torch.nn.functional as F


def mse(y_pred, y):
    return F.mse_loss(y_pred.view(-1), y.view(-1))


def center_rows(x):
    return x - x.mean(1)[:, None]


def pairwise_sq_dists(a, b):
    a2 = (a ** 2).sum(dim=1)[:, None]  # [N, 1]
    b2 = (b ** 2).sum(dim=1)[None, :]  # [1, M]
    return a2 + b2 - 2 * a @ b.T


def rowwise_dot(a, b):
    return torch.einsum("nd,nd->n", a, b)
