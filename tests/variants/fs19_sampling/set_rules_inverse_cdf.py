"""A correct variant: the filters as set rules (at least the k-th logit; less than p of strictly more probable mass),
and the draw by inverse CDF: one uniform number per row from the generator, searchsorted in the cumulative sums."""

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    keep = torch.ones_like(logits, dtype=torch.bool)
    if top_k is not None:
        k = min(top_k, logits.shape[-1])
        kth = logits.sort(dim=-1, descending=True).values[..., k - 1 : k]
        keep &= logits >= kth
    if top_p is not None:
        p = torch.softmax(logits.masked_fill(~keep, float("-inf")), dim=-1)
        above = (p.unsqueeze(-2) * (p.unsqueeze(-2) > p.unsqueeze(-1))).sum(-1)  # mass strictly more probable
        keep &= above < top_p
    logits = logits.masked_fill(~keep, float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p).double()
    cdf = probs.cumsum(dim=-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
