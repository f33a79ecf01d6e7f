# Mistake: registers the bias as a buffer: it is used in forward, but it is not a parameter, so it gets no gradient.
# Expect: does not require grad, so autograd keeps no gradient

import math

import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.register_buffer("bias", torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + self.bias


class Stack(nn.Module):
    def __init__(self, sizes: list[int]):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.scale = nn.Parameter(torch.ones(sizes[-1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x) * self.scale
