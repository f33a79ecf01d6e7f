# Mistake: splits k by the number of rows (x.shape[0]) instead of the row length, the number of columns.
# Expect: k was split by the number of rows

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    i, j = divmod(k, x.shape[0])
    x[i, j] = value
