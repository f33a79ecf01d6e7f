# Mistake: calls torch.logsumexp instead of writing the max trick.
# Expect: calls torch's own `logsumexp`

import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    return F.binary_cross_entropy_with_logits(logits, targets)


def logsumexp(x, dim=-1):
    return torch.logsumexp(x, dim=dim)


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
