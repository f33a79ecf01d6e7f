# Mistake: calls the built-ins the statement forbids; the values are right, and torch's.
# Expect: torch's own `softmax`

import torch
import torch.nn.functional as F


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return F.softmax(x, dim=dim)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x.log_softmax(dim)
