"""A correct variant: convert first, then turn on tracking; copy the array in NumPy; detach().clone()."""

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    w = torch.tensor(values).float()  # int64 -> float32 before requires_grad: still a leaf
    w.requires_grad = True
    return w


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr.copy())


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    t = torch.from_numpy(arr)
    return t


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone()
