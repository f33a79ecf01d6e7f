# Mistake: the causal mask off by one: triu() without diagonal=1 hides each query's own key too (query 0 has none).
# Expect: hides the diagonal too

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        t = scores.shape[-1]
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(), float("-inf"))
    if key_padding_mask is not None:
        scores = scores.masked_fill(~(~key_padding_mask)[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.nan_to_num(weights, nan=0.0) @ v if key_padding_mask is not None else weights @ v
