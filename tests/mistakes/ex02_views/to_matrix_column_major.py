# Mistake: fills the matrix column by column (a transposed view): still a view of x, but in the wrong order.
# Expect: is filled column by column

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(-1, rows).t()


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    i, j = divmod(k, x.shape[1])
    x[i, j] = value
