# Mistake: weight and bias are plain tensors with requires_grad=True, not nn.Parameter (seed: "the optimizer only sees nn.Parameter").
# Expect: not an nn.Parameter

import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.randn(out_features, in_features, requires_grad=True)
        self.bias = torch.zeros(out_features, requires_grad=True)

    def forward(self, x):
        return x @ self.weight.T + self.bias


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.scale = nn.Parameter(torch.ones(sizes[-1]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x) * self.scale
