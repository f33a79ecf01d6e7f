# Mistake: shares with from_numpy but then converts to float32, which copies a float64 array.
# Expect: Converting the dtype (.float(), .to(), dtype=...) always makes a copy

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr).float()


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
