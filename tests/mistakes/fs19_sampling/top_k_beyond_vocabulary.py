# Mistake: top_k larger than the vocabulary not guarded: torch.topk raises where the statement says it drops nothing.
# Expect: raised RuntimeError

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    if top_k is not None:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # the k-th largest logit of each row
        logits = logits.masked_fill(logits < kth, float("-inf"))  # below it: dropped; ties with it: kept
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        before = torch.cumsum(probs, dim=-1) - probs  # the mass of the tokens more probable than each one
        drop = before >= top_p  # the token that crosses top_p has less before it: it stays
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))  # back in vocabulary order
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    # Only `generator` is drawn from: the same seed gives the same tokens, and the global RNG is left alone.
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
