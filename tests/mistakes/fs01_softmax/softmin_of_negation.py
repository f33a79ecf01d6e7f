# Mistake: the softmax the statement forbids, spelled as the softmin of the negation; the values are torch's.
# Expect: torch's own `softmin`

import torch
import torch.nn.functional as F


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return F.softmin(-x, dim=dim)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    shifted = (x - m).double()
    return (shifted - shifted.exp().sum(dim=dim, keepdim=True).log()).to(x.dtype)
