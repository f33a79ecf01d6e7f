"""Reference solution of ex02 (view vs reshape, contiguous(), writing through a view)."""

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    # view() never copies (it raises where it would have to), so the matrix is x's memory read row by row.
    return x.view(rows, -1)


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    # Column by column of x is row by row of x.t(). The transpose only swaps strides, so it is not contiguous
    # and view() refuses it: contiguous() first copies it into row-by-row memory. x itself is not touched.
    return x.t().contiguous().view(-1)


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    # x[i] is a view of row i, and mul_ writes through it into x's memory: nothing else changes.
    x[i].mul_(factor)


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    # Entry k counted row by row is row k // columns, column k % columns, whatever the memory order. Writing
    # at that index changes x even when x is a transpose, where x.reshape(-1) would be a copy.
    i, j = divmod(k, x.shape[1])
    x[i, j] = value
