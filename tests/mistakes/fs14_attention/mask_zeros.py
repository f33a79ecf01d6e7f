# Mistake: masked scores are set to 0 instead of -inf: masked keys keep a weight of exp(0).
# Expect: set to 0 instead of -inf

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed.tril()
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask)[:, None, None, :]
    weights = torch.softmax(scores.masked_fill(~allowed, 0.0), dim=-1)
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    return weights @ v
