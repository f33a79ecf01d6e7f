# Mistake: uses torch.from_numpy where a copy was required: later writes to the array leak in.
# Expect: torch.from_numpy, torch.as_tensor

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
