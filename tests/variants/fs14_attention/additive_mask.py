"""A correct variant: an additive float mask (0 where allowed, -inf elsewhere) in q's dtype, NaN rows zeroed."""

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    tq, tk = q.shape[-2], k.shape[-2]
    allowed = torch.ones(q.shape[0], 1, tq, tk, dtype=torch.bool)
    if causal:
        allowed = allowed & torch.tril(torch.ones(tq, tk, dtype=torch.bool))
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask).view(q.shape[0], 1, 1, tk)
    bias = torch.zeros(allowed.shape, dtype=q.dtype).masked_fill(~allowed, float("-inf"))
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.shape[-1] ** -0.5 + bias
    weights = torch.nan_to_num(scores.softmax(-1), nan=0.0)
    return torch.matmul(weights, v)
