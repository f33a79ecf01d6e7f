"""A correct variant: a uniform draw compared with the keep probability, torch.where, the module through a flag."""
import torch
from torch import nn


def dropout(x, p=0.5, training=True, generator=None):
    keep_p = 1 - p
    if not training or keep_p == 1:
        return x
    if keep_p == 0:
        return x * 0
    u = torch.rand(x.shape, generator=generator, dtype=torch.float32)
    return torch.where(u < keep_p, x / keep_p, torch.zeros_like(x))


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.keep_p = 1 - p

    def forward(self, x):
        return dropout(x, 1 - self.keep_p, training=self.training)
