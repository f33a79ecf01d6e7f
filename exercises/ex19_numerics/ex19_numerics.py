"""ex19 - Numerics: find and fix NaN and inf.

The three functions below are the textbook versions. They work on tame numbers and break on the
extreme ones a real model produces sooner or later: a confident wrong logit of 60, a row of scores
around 1000, a corrupted batch. Fix each one so it stays finite and correct. Run `grade ex19`.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def bce_with_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of raw scores `logits` (any shape) against 0/1 `targets` (same shape).

    Returns a scalar tensor; backward must give the right gradient with respect to logits.
    """
    probs = torch.sigmoid(logits)  # TODO fix: try logits of +-60. What does sigmoid round to in float32?
    return F.binary_cross_entropy(probs, targets)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """log(sum(exp(x), dim)): `x` with dimension `dim` reduced away. Do not call torch.logsumexp."""
    return torch.log(torch.exp(x).sum(dim=dim))  # TODO fix: exp(1000) is inf, exp(-1000) is 0.


def safe_train_step(model: nn.Module, optimizer, loss_fn, x, y, max_norm: float) -> float:
    """One training step that survives exploding gradients and bad batches.

    Zero the gradients, forward, compute loss_fn(model(x), y). If the loss is not finite (NaN or inf),
    skip the batch: no backward, no step. Otherwise backward, clip the total gradient norm of the
    model's parameters to max_norm, and step. Return the loss as a Python float either way.
    """
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()  # TODO fix: no guard against a NaN/inf loss, and no gradient clipping.
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    z = torch.tensor([60.0, -60.0, 2.0])
    t = torch.tensor([0.0, 1.0, 1.0])
    print("bce:", bce_with_logits(z, t), "expected about", (60 + 60 + 0.127) / 3)
    print("logsumexp:", logsumexp(torch.tensor([[1000.0, 999.0], [-1000.0, -1001.0]])))
