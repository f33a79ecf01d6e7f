"""A correct variant: torch.reshape, flatten of a permute, copy_ into the row, a divmod tuple as the index."""

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.reshape(x, (rows, -1))


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return torch.flatten(x.permute(1, 0))


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].copy_(x[i] * factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    x[divmod(k, x.size(-1))] = value
