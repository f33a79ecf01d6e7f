# Mistake: the cross-entropy formula written out with log(sigmoid(z)): log(0) on large logits.
# Expect: log(0)

import torch
import torch.nn.functional as F


def bce_with_logits(logits, targets):
    p = torch.sigmoid(logits)
    return -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p)).mean()


def logsumexp(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    return (m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))).squeeze(dim)


def safe_train_step(model, optimizer, loss_fn, x, y, max_norm):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    if not torch.isfinite(loss):
        return loss.item()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
