"""Reference solution of ex01 (tensor creation, dtypes, copies and shared memory)."""

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    # A list of ints becomes int64, and only floating tensors can require grad: ask for float32. Setting
    # requires_grad here, at creation, makes a leaf that backward() fills; a conversion after it would not be one.
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    # torch.tensor always copies the data and keeps the array's dtype (float64 stays float64).
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    # from_numpy wraps the array's own memory: no copy, so later writes into arr show through. Any conversion
    # after it (.float(), .to()) would copy again.
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    # clone() copies into new memory; `t` itself, t.detach() and views share t's memory and see its changes.
    return t.clone()
