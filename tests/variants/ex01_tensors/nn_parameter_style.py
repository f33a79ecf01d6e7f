"""A correct variant: nn.Parameter for the weights (a float32 leaf that requires grad), torch.tensor for the copies."""

import numpy as np
import torch
from torch import nn


def make_weights(values):
    return nn.Parameter(torch.as_tensor(values, dtype=torch.float32))


def copy_from_numpy(arr):
    return torch.tensor(arr, dtype=torch.from_numpy(arr).dtype)


def share_from_numpy(arr):
    return torch.from_numpy(arr).view(arr.shape)


def snapshot(t):
    return torch.tensor(t.tolist(), dtype=t.dtype).reshape(t.shape)
