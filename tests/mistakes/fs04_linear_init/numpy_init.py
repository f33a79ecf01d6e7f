# Mistake: draws with NumPy and copies in: torch.manual_seed no longer makes the layer reproducible.
# Expect: not come from torch's generator
import math

import numpy as np

import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        fan_in = self.weight.shape[1]  # in_features: how many inputs each output sums
        bound = 1 / math.sqrt(fan_in)
        values = np.random.uniform(-bound, bound, size=tuple(self.weight.shape))
        with torch.no_grad():
            self.weight.copy_(torch.from_numpy(values))
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)  # nn.Linear: the bias bound is 1 / sqrt(fan_in) too

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x @ self.weight.t()
        if self.bias is not None:
            out = out + self.bias
        return out
