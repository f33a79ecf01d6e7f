# Mistake: the textbook formula, exp(x) / sum(exp(x)), with no max subtracted: overflows near +1000, 0 / 0 near -1000.
# Expect: no max subtracted

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x - torch.log(torch.exp(x).sum(dim=dim, keepdim=True))
