"""A correct variant: computes in float32 along the last axis (movedim), then moves the axis and the dtype back."""
import torch


def _stable(x, dim, log):
    z = x.float().movedim(dim, -1)
    z = z - z.max(-1, keepdim=True)[0]
    e = z.exp()
    total = e.sum(-1, keepdim=True)
    out = z - total.log() if log else e * total.reciprocal()
    return out.movedim(-1, dim).to(x.dtype)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return _stable(x, dim, log=False)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return _stable(x, dim, log=True)
