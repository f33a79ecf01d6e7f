# Mistake: a generator made at import, on the GPU whenever there is one, draws Affine's weights there: a CPU
# input meets GPU weights.
# Expect: when your file is imported
import math

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
GENERATOR = torch.Generator(device=DEVICE)


class Affine(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features, generator=GENERATOR, device=DEVICE)
                                   / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.zeros(out_features, device=DEVICE))

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
