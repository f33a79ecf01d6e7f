"""ex02 - Views: view vs reshape, contiguous(), and writing through a view.

A view is a new tensor object over the SAME memory: writing through it changes the original.
view() only works when the memory layout allows it (a transpose is not contiguous); reshape()
returns a view when it can and a copy when it must. Run `grade ex02` to check your work;
`grade hint ex02` if you are stuck.
"""

import torch


def to_matrix(x: torch.Tensor, rows: int) -> torch.Tensor:
    """Return x (1-D, contiguous, numel divisible by rows) as a [rows, numel // rows] matrix, row by row.

    The result must be a view of x: it shares x's memory, so writing into it changes x. No copy.
    """
    # TODO
    raise NotImplementedError


def columns_flat(x: torch.Tensor) -> torch.Tensor:
    """Return the entries of the 2-D tensor x column by column, as a 1-D tensor of x.numel() entries.

    For x = [[1, 2, 3],
             [4, 5, 6]]  the result is [1, 4, 2, 5, 3, 6]. x itself must not change.
    """
    # TODO: column by column of x is row by row of its transpose.
    raise NotImplementedError


def scale_row_(x: torch.Tensor, i: int, factor: float) -> None:
    """Multiply row i of the 2-D tensor x by factor, IN PLACE: x itself changes, other rows do not.

    The return value is ignored (returning None or x are both fine).
    """
    # TODO
    raise NotImplementedError


def fill_flat_(x: torch.Tensor, k: int, value: float) -> None:
    """Set the k-th entry of the 2-D tensor x, counted row by row (the order of x.flatten()), to value, IN PLACE.

    x may be non-contiguous, e.g. the transpose of another tensor: x itself must change anyway.
    The return value is ignored.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    x = torch.arange(6.0)
    m = to_matrix(x, 2)
    m[0, 0] = 100.0
    print("m:", m, "x:", x)  # x[0] should be 100 now
    print(columns_flat(torch.tensor([[1, 2, 3], [4, 5, 6]])))  # [1, 4, 2, 5, 3, 6]
    y = torch.ones(3, 2)
    scale_row_(y, 1, 5.0)
    print(y)
    z = torch.zeros(2, 3).t()  # a non-contiguous [3, 2] tensor
    fill_flat_(z, 3, 7.0)
    print(z)  # z[1, 1] == 7
