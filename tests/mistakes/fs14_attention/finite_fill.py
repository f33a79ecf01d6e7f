# Mistake: fills masked scores with -1e9: a fully masked row averages v, and float16 cannot hold -1e9.
# Expect: the mean of v

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed.tril()
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask)[:, None, None, :]
    weights = torch.softmax(scores.masked_fill(~allowed, -1e9), dim=-1)
    return weights @ v
