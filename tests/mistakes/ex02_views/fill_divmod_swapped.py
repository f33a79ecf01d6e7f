# Mistake: unpacks divmod(k, columns) the wrong way round (column first), so the value lands at x[j, i].
# Expect: the row and the column are swapped

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    j, i = divmod(k, x.shape[1])
    x[i, j] = value
