"""Reference solution of fs03 (GELU exact and tanh, SiLU and a SwiGLU block, by hand)."""

import math

import torch
import torch.nn as nn


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    if approximate == "tanh":
        # GPT-2's approximation: a cube inside the tanh, sqrt(2 / pi) in front of it.
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    # The exact GELU: x times the standard normal CDF, whose erf takes x / sqrt(2).
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def silu(x: torch.Tensor) -> torch.Tensor:
    # torch.sigmoid is finite for any x; a hand-made x * exp(x) / (1 + exp(x)) is inf / inf = NaN at x = 1000.
    return x * torch.sigmoid(x)


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        # No bias in any of the three projections, as in LLaMA and Gemma.
        self.gate = nn.Linear(d_model, d_hidden, bias=False)
        self.up = nn.Linear(d_model, d_hidden, bias=False)
        self.down = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The activation goes on the gate only; the product is elementwise.
        return self.down(silu(self.gate(x)) * self.up(x))
