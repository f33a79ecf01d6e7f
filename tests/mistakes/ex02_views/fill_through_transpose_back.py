# Mistake: "undoes" the transpose with x.t().reshape(-1): for a transposed x that is a view in memory order,
# so the value lands at memory position k instead of entry k of x (and a contiguous x is copied: lost).
# Expect: of the memory, not at entry

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    x.t().reshape(-1)[k] = value
