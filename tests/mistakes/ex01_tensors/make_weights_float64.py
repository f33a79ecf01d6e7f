# Mistake: builds the weights through NumPy, whose default float is float64, so the weights are float64.
# Expect: float64 is NumPy's default

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(np.array(values, dtype=float), requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
