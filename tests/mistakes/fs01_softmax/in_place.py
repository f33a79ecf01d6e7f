# Mistake: saves memory with in-place operations on x itself: the caller's logits are overwritten.
# Expect: in place

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x.sub_(x.amax(dim=dim, keepdim=True)).exp_()
    return x / x.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
