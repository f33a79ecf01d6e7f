# Mistake: asks an integer tensor to require grad (torch.tensor of a list of ints is int64).
# Expect: only floating-point tensors can require grad

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
