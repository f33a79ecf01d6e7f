# Mistake: keepdim=True everywhere and never removes the reduced dimension.
# Expect: keepdim=True kept the reduced dimension

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # Never forms sigmoid(logits): log-sigmoid is computed as -softplus(-z), finite for any z.
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    return m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))


def safe_train_step(model: nn.Module, optimizer, loss_fn, x, y, max_norm: float) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):  # NaN and +-inf: skip before backward, nothing reaches .grad
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
