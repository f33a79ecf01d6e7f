# Mistake: takes the last entry of torch.logcumsumexp: the built-in logsumexp by another name, where the
# statement asks the max trick written by hand.
# Expect: computes a logsumexp for you

import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x, dim=-1):
    return torch.logcumsumexp(x, dim).select(dim, -1)  # "its running version, last entry"


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
