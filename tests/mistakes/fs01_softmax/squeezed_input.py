# Mistake: the input squeezed first (keepdim is there): a size-1 dimension of x disappears, dim then points at another
# axis, and the result does not line up. Not a lost keepdim: the message must not say so.
# Expect: the size-1 dimensions of x are gone

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x = x.squeeze()
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x = x.squeeze()
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
