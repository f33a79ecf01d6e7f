# Mistake: forward calls layer.forward(x), which skips nn.Module.__call__ and its hooks.
# Expect: layer(x)

import math

import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        return x @ self.weight.T + self.bias


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.scale = nn.Parameter(torch.ones(sizes[-1]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer.forward(x))
        return self.layers[-1].forward(x) * self.scale
