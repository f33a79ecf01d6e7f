# Mistake: x.max(dim=..., keepdim=True) returns a (values, indices) pair, used here as if it were a tensor.
# Expect: returns a pair

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.max(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.max(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
