# Variant: statistic=mean
"""A correct answer whose rowwise_dot returns a strided view (the diagonal of a @ b.T): for a single row it
is a one-element tensor with a stride other than 1, which must travel back to the judge like any other."""


import torch


def mse(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred.reshape(-1) - y.reshape(-1)) ** 2).mean()


def center_rows(x: torch.Tensor) -> torch.Tensor:
    return x - x.mean(dim=1, keepdim=True)  # [N, D] - [N, 1]


def pairwise_sq_dists(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    diff = a[:, None, :] - b[None, :, :]  # [N, 1, D] - [1, M, D] -> [N, M, D]
    return (diff ** 2).sum(dim=-1)


def rowwise_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.diagonal(a @ b.T)  # a view with stride N + 1: for one row, one element of stride 2
