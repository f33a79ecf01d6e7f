"""Reference solution of fs05 (inverted dropout from scratch: a function and a module)."""

import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    # Eval mode: the identity. Inverted dropout scaled in training, so there is nothing to undo here.
    if not training:
        return x
    # p = 1 drops everything: return zeros before x * 0 / 0 makes NaN.
    if p == 1:
        return torch.zeros_like(x)
    # One Bernoulli draw per entry, from the generator given (the global one when it is None): 1 keeps, 0 drops.
    keep = torch.bernoulli(torch.full_like(x, 1 - p), generator=generator)
    # Divide the kept entries by the keep probability: the expected output is x, in training as in eval.
    return x * keep / (1 - p)


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p  # a plain attribute: dropout has nothing to learn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # self.training is what .train() and .eval() switch.
        return dropout(x, self.p, self.training)
