# Mistake: subtracts the max of the whole tensor (x.max() without dim), so a row far below it still underflows.
# Expect: max of the whole tensor

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = torch.exp(x - x.max())
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.max()
    return shifted - torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
