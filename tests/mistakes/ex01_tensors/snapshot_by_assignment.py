# Mistake: "copies" with an assignment, so the snapshot is the same tensor as t.
# Expect: copies nothing

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    copy = t
    return copy
