# Mistake: the max and the sum lose the reduced dimension, so they do not line up with x (an error, or, on a
# square matrix, a silent broadcast along the wrong dimension).
# Expect: keepdim=True

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=dim))
    return e / e.sum(dim=dim)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.amax(dim=dim)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim))
