# Mistake: converts the dtype after requires_grad=True, so the weights are not a leaf and .grad stays None.
# Expect: not a leaf

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    w = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    return w.float()


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
