"""fs05 - Dropout from scratch: inverted, seeded, and off in eval.

In training, dropout zeroes each entry of x at random and scales the kept entries up, so that the expected
output is x ("inverted" dropout: nothing changes at eval time, where dropout is the identity).
p: the probability of zeroing each entry (as F.dropout's p).

Write it yourself: no F.dropout, torch.dropout or nn.Dropout. Run `grade fs05` to check your work.
"""

import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    """Inverted dropout of x (any shape, float32 or float16): a new tensor of x's shape and dtype.

    training=False returns x unchanged. The random draws come from `generator` when one is given (and then only
    from it), from torch's global generator otherwise. x itself is never modified.
    """
    # TODO
    raise NotImplementedError


class Dropout(nn.Module):
    """Dropout as a layer: drops in train mode, the identity after .eval()."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        # TODO
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    x = torch.ones(1000)
    y = dropout(x, 0.3, generator=torch.Generator().manual_seed(0))
    print((y == 0).float().mean(), y.mean())  # about 0.3, about 1.0
