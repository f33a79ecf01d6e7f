"""A correct variant: every activation computed in float32 and cast back to the input's dtype; the exact GELU
through erfc; the block's projections in an nn.ModuleDict-free style with a tuple unpacked."""
import math

import torch
from torch import nn


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    v = x.float()
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (v + 0.044715 * torch.pow(v, 3))
        out = 0.5 * v * (1.0 + torch.tanh(inner))
    else:
        out = 0.5 * v * torch.erfc(-v / math.sqrt(2.0))
    return out.to(x.dtype)


def silu(x: torch.Tensor) -> torch.Tensor:
    v = x.float()
    return (v * v.sigmoid()).to(x.dtype)


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate, self.up, self.down = (nn.Linear(i, o, bias=False) for i, o in
                                         ((d_model, d_hidden), (d_model, d_hidden), (d_hidden, d_model)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.gate(x)
        return self.down(silu(h) * self.up(x))
