"""A correct variant: the mask itself scaled (bernoulli_ into an empty tensor), then one product; F-free."""
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True, generator=None) -> torch.Tensor:
    if not training:
        return x
    keep_p = 1 - p
    mask = torch.empty_like(x).bernoulli_(keep_p, generator=generator)
    if keep_p > 0:
        mask.div_(keep_p)
    return x * mask


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return dropout(x, self.p, self.training) if self.training else x
