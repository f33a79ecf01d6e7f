"""Reference solution of ex10 (nn.Parameter, nn.ModuleList, calling modules)."""

import math

import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # nn.Parameter registers the tensor with the module: parameters(), optimizers and state_dict() see it.
        # [out, in] as nn.Linear stores it; / sqrt(in) keeps the outputs' scale near the inputs' whatever in is.
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + self.bias  # [N, in] @ [in, out] + [out] -> [N, out]


class Stack(nn.Module):
    def __init__(self, sizes: list[int]):
        super().__init__()
        # nn.ModuleList registers each layer as a sub-module; in a plain list their parameters stay invisible.
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.scale = nn.Parameter(torch.ones(sizes[-1]))  # a Parameter, so the optimizer learns it too

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Call the layers, layer(x), never layer.forward(x): __call__ runs the hooks around forward.
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x) * self.scale  # no ReLU after the last layer: outputs may be negative
