# Mistake: writes into x.reshape(-1), which is a copy when x is a transpose: the write is lost.
# Expect: reshape(), flatten() and contiguous() return a copy

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    x.reshape(-1)[k] = value
