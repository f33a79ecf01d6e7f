# Mistake: forward leaves the bias out.
# Expect: leaves the bias out
import math

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
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)  # nn.Linear: the bias bound is 1 / sqrt(fan_in) too

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.t()
