# Mistake: averages a column over dim=0, which returns shape [1], not the scalar the statement asks for.
# Expect: should return a scalar tensor (shape [])

import torch


def mse(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # Flatten both to [N] first: [N] - [N, 1] would broadcast to [N, N] and average N * N wrong pairs.
    return ((y_pred.reshape(-1, 1) - y.reshape(-1, 1)) ** 2).mean(dim=0)


def center_rows(x: torch.Tensor) -> torch.Tensor:
    # keepdim=True keeps the row means as a column [N, 1], which lines up with the rows of x;
    # a flat [N] would line up with the columns instead.
    return x - x.mean(dim=1, keepdim=True)  # [N, D] - [N, 1]


def pairwise_sq_dists(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # New axes put a's rows along dim 0 and b's along dim 1, so one subtraction makes every pair.
    diff = a[:, None, :] - b[None, :, :]  # [N, 1, D] - [1, M, D] -> [N, M, D]
    return (diff ** 2).sum(dim=-1)


def rowwise_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # Multiply entry by entry and sum each row: one product per row, two operations whatever N is
    # (a @ b.T would compute all N * N pairs and keep only the diagonal).
    return (a * b).sum(dim=1)
