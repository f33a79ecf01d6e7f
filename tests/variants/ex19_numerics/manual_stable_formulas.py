# Variant: clip=norm
"""A correct variant: the stable formulas written out by hand, a Python-side finiteness test,
and the parameters taken from the optimizer."""

import math

import torch


def bce_with_logits(logits, targets):
    # max(z, 0) - z*t + log(1 + exp(-|z|)): exp never sees a positive argument.
    per_element = logits.clamp(min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))
    return per_element.mean()


def logsumexp(x, dim=-1):
    m = x.max(dim=dim, keepdim=True).values
    return m.squeeze(dim) + torch.log(torch.sum(torch.exp(x - m), dim=dim))


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    value = loss.item()
    if not math.isfinite(value):
        return value
    loss.backward()
    params = [p for group in optimizer.param_groups for p in group["params"]]
    torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm)
    optimizer.step()
    return value
