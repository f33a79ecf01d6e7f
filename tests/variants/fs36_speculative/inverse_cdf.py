"""A correct variant: accept by comparing u * q with p in float32, draw the corrections by inverting the cumulative
sum with one uniform each, and the residual by where/sum."""

import torch


def residual_probs(p, q):
    diff = torch.where(p > q, p - q, torch.zeros_like(p))
    return diff / diff.sum(-1, keepdim=True)


def draw(probs, generator):
    u = torch.rand(1, generator=generator, dtype=probs.dtype)
    cdf = torch.cumsum(probs, 0)
    return min(int(torch.searchsorted(cdf, u * cdf[-1], right=True)), probs.numel() - 1)


def speculative_step(target_probs, draft_probs, draft_tokens, generator=None):
    k = draft_tokens.numel()
    kept = []
    for i in range(k):
        x = int(draft_tokens[i])
        u = torch.rand(1, generator=generator)
        if u.item() * float(draft_probs[i, x]) >= float(target_probs[i, x]):
            kept.append(draw(residual_probs(target_probs[i], draft_probs[i]), generator))
            return torch.tensor(kept, dtype=torch.int64)
        kept.append(x)
    kept.append(draw(target_probs[k], generator))
    return torch.tensor(kept, dtype=torch.int64)
