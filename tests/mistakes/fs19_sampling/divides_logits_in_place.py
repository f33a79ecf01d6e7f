# Mistake: divides the caller's logits by the temperature in place (logits /= temperature): the probabilities are right,
# but the tensor passed in is changed.
# Expect: changed the caller's logits in place
# Variant: temperature=first

import torch


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits /= temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        before = torch.cumsum(probs, dim=-1) - probs
        drop = before >= top_p
        logits = logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
