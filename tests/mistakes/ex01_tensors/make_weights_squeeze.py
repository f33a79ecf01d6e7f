# Mistake: wraps the values in an extra list and squeezes it away: for a single value squeeze() drops the only axis.
# Expect: squeeze() without a dim

import numpy as np
import torch


def make_weights(values: list) -> torch.Tensor:
    w = torch.tensor([values], dtype=torch.float32).squeeze()  # [1, n] -> [n], but [1, 1] -> []
    return w.requires_grad_()


def copy_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.tensor(arr)


def share_from_numpy(arr: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(arr)


def snapshot(t: torch.Tensor) -> torch.Tensor:
    return t.clone()
