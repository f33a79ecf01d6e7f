"""A correct variant: einsum for the affine map, parameters created from uniform_ in place, a ModuleList
grown with extend, the last layer found by index, and scale multiplied in place of a fresh tensor."""

import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        bound = in_features ** -0.5
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))

    def forward(self, x):
        return torch.einsum("ni,oi->no", x, self.weight) + self.bias


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList()
        self.layers.extend(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.scale = nn.Parameter(torch.ones(sizes[-1]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i != len(self.layers) - 1:
                x = x.relu()
        return x.mul(self.scale)
