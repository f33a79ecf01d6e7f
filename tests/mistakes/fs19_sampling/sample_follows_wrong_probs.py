# Mistake: top-p measured before top-k in sampling_probs; sample draws from it, rightly: the support check must
# blame sampling_probs, never tell sample to draw from sampling_probs(...), which it does.
# Expect: gives it probability

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    full = logits
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(full, dim=-1), dim=-1, descending=True)
        before = torch.cumsum(probs, dim=-1) - probs
        drop = before >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
