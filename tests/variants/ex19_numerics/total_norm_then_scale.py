# Variant: clip=norm
"""A correct variant: the total norm measured with get_total_norm and applied with clip_grads_with_norm_,
and a guard on the Python float."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # Never forms sigmoid(logits): log-sigmoid is computed as -softplus(-z), finite for any z.
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)  # exp(x - m) <= 1: no overflow, and at least one term is 1
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    value = float(loss)
    if math.isnan(value) or math.isinf(value):
        return value
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = torch.nn.utils.get_total_norm(grads)
    torch.nn.utils.clip_grads_with_norm_(model.parameters(), max_norm, total)
    optimizer.step()
    return value
