# Mistake: creates the weights on the GPU whenever there is one (a default device in a tensor helper).
# Expect: With a GPU present

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.tensor(values, dtype=torch.float32, requires_grad=True, device=device)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
