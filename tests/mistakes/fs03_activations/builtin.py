# Mistake: gelu and silu call the built-ins the statement forbids; the values are right, and torch's.
# Expect: torch's own `gelu`
import math

import torch
import torch.nn as nn


import torch.nn.functional as F


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(x, approximate=approximate)


def silu(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x)


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate = nn.Linear(d_model, d_hidden, bias=False)
        self.up = nn.Linear(d_model, d_hidden, bias=False)
        self.down = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(silu(self.gate(x)) * self.up(x))
