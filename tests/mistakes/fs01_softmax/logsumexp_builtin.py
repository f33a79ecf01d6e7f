# Mistake: a hand-written softmax, but log_softmax leans on torch.logsumexp, which the statement forbids.
# Expect: torch's own `logsumexp`

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x - torch.logsumexp(x, dim=dim, keepdim=True)
