# Mistake: GELU as x * sigmoid(1.702 x), a cheaper approximation that is neither of the two asked.
# Expect: sigmoid approximation
import math

import torch
import torch.nn as nn


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return x * torch.sigmoid(1.702 * x)


def silu(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate = nn.Linear(d_model, d_hidden, bias=False)
        self.up = nn.Linear(d_model, d_hidden, bias=False)
        self.down = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(silu(self.gate(x)) * self.up(x))
