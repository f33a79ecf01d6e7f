"""ex03 - Broadcasting: make shapes line up on purpose, not by accident.

Broadcasting lines shapes up from the LAST dimension: two sizes match when they are equal or one
of them is 1, and a missing leading dimension counts as 1. So w of shape [1] times x of shape
[N, 1] gives [N, 1], as you want; but a [N] minus a [N, 1] gives [N, N], silently.

Write the four functions below with tensor operations only (no Python loop over rows).
Run the file to see the shapes at work, and `grade ex03` to check your work.
"""

import torch


def mse(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the mean squared error between y_pred and y, as a scalar tensor.

    Each of y_pred and y may have shape [N] or [N, 1] (a model's flat output against a column of
    targets, for example): pair sample i of y_pred with sample i of y in every case.
    """
    # TODO: make both shapes agree before you subtract.
    raise NotImplementedError


def center_rows(x: torch.Tensor) -> torch.Tensor:
    """x has shape [N, D]. Return x with each row's mean subtracted from that row (shape [N, D])."""
    # TODO: the row means must line up with the rows, whatever N and D are.
    raise NotImplementedError


def pairwise_sq_dists(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a has shape [N, D] and b shape [M, D]. Return d of shape [N, M] with
    d[i, j] = sum over k of (a[i, k] - b[j, k]) ** 2, without a Python loop."""
    # TODO: here a broadcast to a bigger shape is exactly what you want.
    raise NotImplementedError


def rowwise_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a and b have shape [N, D]. Return out of shape [N] with out[i] = dot(a[i], b[i]).

    Vectorize it: a fixed number of tensor operations whatever N is, no Python loop over rows.
    """
    # TODO: replace a per-row loop by whole-tensor operations.
    raise NotImplementedError


if __name__ == "__main__":
    w, x = torch.tensor([2.0]), torch.arange(4.0).reshape(4, 1)
    print("[1] * [4, 1] ->", list((w * x).shape))
    flat, column = torch.zeros(4), torch.zeros(4, 1)
    print("[4] - [4, 1] ->", list((flat - column).shape), "(surprised?)")
    a, b = torch.randn(5, 3), torch.randn(5, 3)
    print("mse:", mse(torch.randn(5), torch.randn(5, 1)))
    print("center_rows:", center_rows(a).mean(dim=1))
    print("pairwise_sq_dists:", pairwise_sq_dists(a, b[:2]).shape)
    print("rowwise_dot:", rowwise_dot(a, b))
