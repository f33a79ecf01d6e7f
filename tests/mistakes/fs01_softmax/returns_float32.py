# Mistake: computes in float32 for safety, and forgets to cast back: a float16 input gives a float32 result.
# Expect: keep the input's dtype

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x = x.float()
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    x = x.float()
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
