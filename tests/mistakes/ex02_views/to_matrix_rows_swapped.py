# Mistake: passes rows as the second dimension, so the matrix has the shape swapped.
# Expect: size of the first dimension

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(-1, rows)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    i, j = divmod(k, x.shape[1])
    x[i, j] = value
