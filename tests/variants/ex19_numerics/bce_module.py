# Variant: clip=norm
"""A correct variant: the nn.Module form of the loss, and clipping through a returned total norm."""

import torch
import torch.nn as nn

criterion = nn.BCEWithLogitsLoss()


def bce_with_logits(logits, targets):
    return criterion(logits, targets)


def logsumexp(x, dim=-1):
    m = x.amax(dim, keepdim=True)
    return (x - m).exp().sum(dim).log() + m.squeeze(dim)


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss).item():
        return loss.item()
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # returns the norm before clipping
    assert torch.isfinite(total)
    optimizer.step()
    return loss.item()
