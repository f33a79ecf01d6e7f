"""A correct variant: log_softmax first (max(...).values, subtract, log of the sum of exps), softmax as its exp."""
import torch


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = torch.max(x, dim=dim, keepdim=True).values
    z = x - m
    return z - z.exp().sum(dim, keepdim=True).log()


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return log_softmax(x, dim).exp()
