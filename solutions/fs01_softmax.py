"""Reference solution of fs01 (a numerically stable softmax and log-softmax, by hand)."""

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # Subtract the max along dim: exp(x - max) <= 1 never overflows, and the largest term is exactly 1, so the
    # sum is at least 1 (no 0 / 0 on a row far below zero). keepdim=True keeps the max lined up with x.
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # log(exp(a) / S) = a - log(S) with a = x - max: no probability is formed, so none underflows to 0 before
    # its log (that would be -inf where the answer is, say, -200). A masked -inf stays -inf.
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
