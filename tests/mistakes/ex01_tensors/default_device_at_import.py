# Mistake: the default device is set once, at import, to the GPU whenever there is one: every tensor made
# without a device goes there.
# Expect: when your file is imported

import numpy as np
import torch

torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")


def make_weights(values: list) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
