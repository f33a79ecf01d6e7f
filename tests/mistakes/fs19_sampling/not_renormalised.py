# Mistake: zeroes the dropped tokens' probabilities after the softmax and never renormalises.
# Expect: without renormalising

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    dropped = torch.zeros_like(logits, dtype=torch.bool)
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        dropped = logits < kth
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(logits.masked_fill(dropped, float("-inf")), dim=-1), dim=-1, descending=True)
        before = torch.cumsum(probs, dim=-1) - probs
        drop = before >= top_p
        dropped = dropped | drop.scatter(-1, order, drop)
    probs = torch.softmax(logits, dim=-1)
    return probs.masked_fill(dropped, 0.0)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
