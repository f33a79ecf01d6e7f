# Variant: statistic=mean
"""A correct variant in another style: computes in float64, cdist squared, batched matmul."""

import torch


def mse(y_pred, y):
    diff = torch.flatten(y_pred).double() - torch.flatten(y).double()
    return torch.mean(diff * diff)


def center_rows(x):
    n_cols = x.shape[1]
    row_means = x.double().sum(dim=1, keepdim=True) / n_cols
    return x.double() - row_means


def pairwise_sq_dists(a, b):
    return torch.cdist(a.double(), b.double()) ** 2


def rowwise_dot(a, b):
    # [N, 1, D] @ [N, D, 1] -> [N, 1, 1]
    out = torch.bmm(a.unsqueeze(1).double(), b.unsqueeze(2).double())
    return out.squeeze(-1).squeeze(-1)
