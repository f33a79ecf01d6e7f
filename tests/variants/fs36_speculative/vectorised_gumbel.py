"""A correct variant: all K acceptance tests drawn at once (min(1, p / q) against a vector of uniforms), the first
rejection found with cumprod, and the token drawn by the Gumbel-max trick on log-probabilities."""

import torch


def residual_probs(p, q):
    r = torch.relu(p - q)
    return r / r.sum(dim=-1, keepdim=True)


def gumbel_pick(probs, generator):
    u = torch.rand(probs.shape, generator=generator, dtype=torch.float64).clamp_min(1e-300)
    return int(torch.argmax(torch.log(probs.double()) - torch.log(-torch.log(u))))


def speculative_step(target_probs, draft_probs, draft_tokens, generator=None):
    k = len(draft_tokens)
    rows = torch.arange(k)
    p = target_probs[rows, draft_tokens]
    q = draft_probs[rows, draft_tokens]
    uniforms = torch.rand(k, generator=generator, dtype=torch.float64)
    ok = uniforms < torch.clamp(p.double() / q.double(), max=1.0)
    n = int(torch.cumprod(ok.long(), 0).sum())
    if n < k:
        last = gumbel_pick(residual_probs(target_probs[n], draft_probs[n]), generator)
    else:
        last = gumbel_pick(target_probs[k], generator)
    return torch.cat([draft_tokens[:n].long(), torch.tensor([last])])
