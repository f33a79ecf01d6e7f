"""A correct variant: einsum over the heads, an additive -inf bias on the padding keys, NaN rows zeroed."""

import math

import torch


def cross_attention(x, memory, w_q, w_k, w_v, w_o, num_heads, memory_key_padding_mask=None):
    b, tq, e = x.shape
    h, d = num_heads, e // num_heads
    q = torch.einsum("bte,fe->btf", x, w_q).unflatten(-1, (h, d))
    k = torch.einsum("bsm,fm->bsf", memory, w_k).unflatten(-1, (h, d))
    v = torch.einsum("bsm,fm->bsf", memory, w_v).unflatten(-1, (h, d))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / math.sqrt(d))
    if memory_key_padding_mask is not None:
        keep = (~memory_key_padding_mask)
        bias = torch.zeros(keep.shape, dtype=scores.dtype, device=scores.device).masked_fill(~keep, float("-inf"))
        scores = scores + bias[:, None, None, :]
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    out = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(2)
    return torch.einsum("bqe,fe->bqf", out, w_o)
