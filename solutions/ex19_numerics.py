"""Reference solution of ex19 (numerically stable losses and a training step that survives bad batches)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # sigmoid(60.) rounds to 1.0 in float32, and log(1 - 1.0) is -inf. The logits version never forms
    # sigmoid(logits): log-sigmoid is computed as -softplus(-z), finite for any z, and so is its gradient.
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # log(sum(exp(x))) = m + log(sum(exp(x - m))) for any m: with m the maximum along dim (one per row,
    # kept as a size-1 dim to broadcast), nothing overflows, and adding m back gives the exact result.
    m = x.amax(dim=dim, keepdim=True)  # exp(x - m) <= 1: no overflow, and at least one term is 1
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model: nn.Module, optimizer, loss_fn, x, y, max_norm: float) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):  # NaN and +-inf: skip before backward, nothing reaches .grad
        return loss.item()
    loss.backward()
    # After backward, before step: clip the total gradient norm of the model's parameters to `max_norm`.
    # A single exploding batch then moves the weights a bounded amount.
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
