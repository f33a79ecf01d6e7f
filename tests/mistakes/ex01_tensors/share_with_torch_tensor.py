# Mistake: uses torch.tensor where sharing was required: it copies the array.
# Expect: made a copy

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
