"""fs20 - A LoRA layer, from scratch.

LoRA fine-tunes a frozen nn.Linear (weight W [out, in]) by learning a low-rank update: the output is
base(x) + scaling * x @ A^T @ B^T, with A [r, in] and B [out, r] the only trainable parameters.
B starts at zero, so the layer starts as the base layer; A starts random, so B's gradient is not zero.
After training, the update folds into one Linear: W + scaling * B @ A. Run `grade fs20` to check your work.
"""

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    """The frozen nn.Linear `base` plus a trainable low-rank update of rank r."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        """Keep base as self.base and freeze its parameters (no gradient).

        lora_A: nn.Parameter [r, in_features], random (nn.init.kaiming_uniform_(a=math.sqrt(5)), as PEFT);
        lora_B: nn.Parameter [out_features, r], zeros. self.scaling = alpha / r.
        """
        super().__init__()
        # TODO: keep and freeze base; make lora_A and lora_B; the scaling
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [..., in_features] -> [..., out_features]: base(x) + scaling * x @ A^T @ B^T."""
        # TODO
        raise NotImplementedError

    def merged(self) -> nn.Linear:
        """A new nn.Linear (base's dtype) computing what this layer computes: weight W + scaling * B @ A, base's bias.
        This layer and its base stay unchanged."""
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    layer = LoRALinear(nn.Linear(6, 4), r=2, alpha=4.0)
    x = torch.randn(3, 6)
    print(layer(x).shape, [n for n, p in layer.named_parameters() if p.requires_grad])
