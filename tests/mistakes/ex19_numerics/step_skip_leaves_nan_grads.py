# Mistake: backward first, skips the step on a bad loss, and zeroes gradients only at the end of a good step: the NaN gradients stay.
# Expect: NaN gradients

import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    loss = loss_fn(model(x), y)
    loss.backward()
    if not torch.isfinite(loss):
        return loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()
