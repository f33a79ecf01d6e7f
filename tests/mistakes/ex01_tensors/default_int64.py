# Mistake: relies on the default dtype, which is int64 for a list of ints (and forgets requires_grad).
# Expect: int64 tensor by default

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
