# Mistake: a stable softmax, but log_softmax is the log of it: -inf where a probability underflowed to 0.
# Expect: log of the softmax

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.log(softmax(x, dim))
