# Mistake: keeps exactly the k indices torch.topk returns: a token tied with the k-th logit is dropped.
# Expect: exactly k tokens were kept

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    if top_k is not None and top_k < logits.shape[-1]:
        keep = torch.zeros_like(logits, dtype=torch.bool)
        keep.scatter_(-1, torch.topk(logits, top_k, dim=-1).indices, True)
        logits = logits.masked_fill(~keep, float("-inf"))
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        before = torch.cumsum(probs, dim=-1) - probs
        drop = before >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
