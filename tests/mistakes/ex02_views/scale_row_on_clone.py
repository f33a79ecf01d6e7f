# Mistake: scales a clone of the row, so x itself never changes.
# Expect: clone() makes a copy

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    row = x[i].clone()
    row.mul_(factor)
    return row


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    i, j = divmod(k, x.shape[1])
    x[i, j] = value
