# Mistake: right along any dim it is given, but the signature keeps dim=-1 where this draw's default is dim=0.
# Expect: the default of dim is 0
# Variant: dim=first

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
