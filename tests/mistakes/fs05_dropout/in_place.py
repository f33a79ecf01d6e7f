# Mistake: multiplies x in place to save memory: the caller's tensor is overwritten.
# Expect: changed its input x in place
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    if not training:
        return x
    if p == 1:
        return x.zero_()
    keep = torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)
    return x.mul_(keep).div_((1 - p))


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
