# Mistake: the softmax the statement forbids, called as ATen's own op (torch.ops.aten._softmax.default).
# Expect: torch's own `_softmax

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.ops.aten._softmax.default(x, dim, False)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.special.log_softmax(x, dim)
