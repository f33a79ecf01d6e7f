# Mistake: a softmax written by hand without subtracting the max: exp overflows on large scores.
# Expect: overflows float32

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed.tril()
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask)[:, None, None, :]
    e = scores.masked_fill(~allowed, float("-inf")).exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    return weights @ v
