# Mistake: zeroes entries at random and keeps the others as they are: the mean shrinks.
# Expect: not scaled
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    if not training:
        return x
    keep = torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)
    return x * keep


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
