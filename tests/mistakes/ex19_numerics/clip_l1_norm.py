# Mistake: clips the gradients by their L1 norm (norm_type=1) instead of the L2 norm.
# Variant: clip=norm
# Expect: clipped by their L1 norm

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # Never forms sigmoid(logits): log-sigmoid is computed as -softplus(-z), finite for any z.
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)  # exp(x - m) <= 1: no overflow, and at least one term is 1
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model: nn.Module, optimizer, loss_fn, x, y, max_norm: float) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):  # NaN and +-inf: skip before backward, nothing reaches .grad
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type=1)
    optimizer.step()
    return loss.item()
