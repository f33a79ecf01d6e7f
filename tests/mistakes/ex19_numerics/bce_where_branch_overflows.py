# Mistake: a stable-looking torch.where formula whose unpicked branch overflows: the value is right, the gradient NaN.
# Expect: autograd differentiates both branches

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # Never forms sigmoid(logits): log-sigmoid is computed as -softplus(-z), finite for any z.
    z, t = logits, targets
    per_sample = torch.where(z >= 0, torch.log1p(torch.exp(-z)) + (1 - t) * z, torch.log1p(torch.exp(z)) - t * z)
    return per_sample.mean()


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)  # exp(x - m) <= 1: no overflow, and at least one term is 1
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model: nn.Module, optimizer, loss_fn, x, y, max_norm: float) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):  # NaN and +-inf: skip before backward, nothing reaches .grad
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
