# Mistake: torch.Tensor(arr) to copy: it copies, but always as float32, losing the array's dtype.
# Expect: keep the array's dtype

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.Tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
