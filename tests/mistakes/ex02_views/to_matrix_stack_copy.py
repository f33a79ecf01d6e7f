# Mistake: builds the matrix from pieces with torch.stack, which copies: writes to it never reach x.
# Expect: returned a copy

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.stack(x.chunk(rows))


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    i, j = divmod(k, x.shape[1])
    x[i, j] = value
