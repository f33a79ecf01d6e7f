"""A correct variant through NumPy and other public APIs: a float32 array made a tensor, torch.asarray (shares),
copy.deepcopy for the snapshot."""

import copy

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.from_numpy(np.asarray(values, dtype=np.float32)).requires_grad_(True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.asarray(arr, copy=True)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.asarray(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return copy.deepcopy(t)
