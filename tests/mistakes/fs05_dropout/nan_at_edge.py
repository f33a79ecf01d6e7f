# Mistake: no special case when everything is dropped: x * 0 / 0 is NaN.
# Expect: x * 0 / 0 is 0 / 0
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    if not training:
        return x
    keep = torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)
    return x * keep / (1 - p)


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
