"""fs03 - Activations from scratch: GELU (exact and tanh), SiLU, and a SwiGLU gated MLP.

gelu(x) is x * Phi(x), Phi the CDF of the standard normal: Phi(x) = 0.5 * (1 + erf(x / sqrt(2))).
gelu(x, approximate="tanh") is GPT-2's approximation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).
silu(x) is x * sigmoid(x) (also called swish).
SwiGLU is the feed-forward block of LLaMA and Mistral: down(act(gate(x)) * up(x)), with act = silu (SiLU).

Write gelu and silu yourself with torch.erf, torch.tanh and torch.sigmoid: no F.gelu, nn.GELU, F.silu or
nn.SiLU. Run `grade fs03` to check your work.
"""

import torch
import torch.nn as nn


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """GELU of every element: exact (approximate="none") or the tanh approximation (approximate="tanh").

    x: any shape, float32, float16 or bfloat16; the result has x's shape and dtype.
    """
    # TODO
    raise NotImplementedError


def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU of every element, x * sigmoid(x): x's shape and dtype, finite for any finite x."""
    # TODO
    raise NotImplementedError


class SwiGLU(nn.Module):
    """The gated feed-forward block: down(act(gate(x)) * up(x)), act = silu (SiLU).

    Three projections, nn.Linear without bias: self.gate and self.up map d_model to d_hidden, self.down maps
    d_hidden back to d_model. x: [..., d_model] -> [..., d_model].
    """

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        # TODO: self.gate, self.up, self.down
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    x = torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0])
    print(gelu(x))  # [-0.0040, -0.1587, 0.0000, 0.8413, 2.9960]
    print(gelu(x, approximate="tanh"))  # [-0.0036, -0.1588, 0.0000, 0.8412, 2.9964]
    print(silu(x))  # [-0.1423, -0.2689, 0.0000, 0.7311, 2.8577]
    print(SwiGLU(4, 8)(torch.randn(2, 3, 4)).shape)  # torch.Size([2, 3, 4])
