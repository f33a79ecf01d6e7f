# Mistake: keeps an entry with the probability of dropping it: the mask's meaning turned around.
# Expect: keeps where it should drop
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    if not training:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.bernoulli(torch.full_like(x, 1 - (1 - p)), generator=generator)
    return x * keep / (1 - p)


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
