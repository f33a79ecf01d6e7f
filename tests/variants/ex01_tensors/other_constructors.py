"""A correct variant: other constructors (float list + requires_grad_, from_numpy(...).clone(), as_tensor, empty_like + copy_)."""

import numpy as np
import torch


def make_weights(values):
    w = torch.tensor([float(v) for v in values])  # floats -> float32
    return w.requires_grad_()


def copy_from_numpy(arr):
    return torch.from_numpy(arr).clone()


def share_from_numpy(arr):
    return torch.as_tensor(arr)


def snapshot(t):
    out = torch.empty_like(t)
    out.copy_(t)
    return out
