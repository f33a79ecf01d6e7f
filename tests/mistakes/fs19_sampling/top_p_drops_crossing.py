# Mistake: drops a token once the cumulative mass including it reaches top_p (the top token kept): the set stays below p.
# Expect: the token that crosses top_p dropped

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        drop = torch.cumsum(probs, dim=-1) >= top_p
        drop[..., 0] = False
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
