# Mistake: log_softmax shifts inside the exp but forgets the max outside it: x - log(sum(exp(x - max))).
# Expect: off by exactly the max

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)
    return x - torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
