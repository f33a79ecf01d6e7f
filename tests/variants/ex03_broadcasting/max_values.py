"""A correct variant for the maximum: the (values, indices) pair of max(dim=..., keepdim=True), unpacked."""
# Variant: statistic=max
import torch


def mse(y_pred, y):
    return torch.mean(torch.square(y_pred.flatten() - y.flatten()))


def center_rows(x):
    row_max, _ = x.max(dim=1, keepdim=True)
    return x - row_max


def pairwise_sq_dists(a, b):
    return ((a.unsqueeze(1) - b.unsqueeze(0)) ** 2).sum(dim=2)


def rowwise_dot(a, b):
    return torch.einsum("nd,nd->n", a, b)
