# Mistake: the key mask is accepted but never used (only the causal mask is applied): not a mask on the queries.
# Expect: with the key mask left out

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        t = scores.shape[-1]
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
