"""fs04 - A Linear layer from scratch, initialised as nn.Linear does.

Linear(in_features, out_features, bias=True) holds weight [out_features, in_features] and bias [out_features]
as nn.Parameters (bias None when bias=False), draws their initial values in reset_parameters(), and computes
x @ weight.T + bias in forward, for x of shape [..., in_features].

Write forward yourself: no F.linear, no nn.Linear inside. torch.nn.init is allowed, if you know what it draws.
Run `grade fs04` to check your work.
"""

import math

import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        """Create weight ([out_features, in_features]) and bias ([out_features], or None when bias=False) as
        nn.Parameters, then call self.reset_parameters()."""
        super().__init__()
        # TODO
        raise NotImplementedError

    def reset_parameters(self) -> None:
        """Draw the initial values in place, from torch's generator:
        weight and bias uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)], as nn.Linear does."""
        # TODO
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [..., in_features] -> [..., out_features]."""
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    layer = Linear(64, 16)
    print(layer.weight.shape, layer.bias.shape)  # torch.Size([16, 64]) torch.Size([16])
    print(layer.weight.abs().max(), layer.weight.std())  # just below 1/8 = 0.125, and about 0.125 / sqrt(3) = 0.072
    print(layer(torch.randn(2, 3, 64)).shape)  # torch.Size([2, 3, 16])
