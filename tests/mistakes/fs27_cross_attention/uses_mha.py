# Mistake: calls nn.MultiheadAttention, which the statement forbids.
# Expect: calls PyTorch's own

import math

import torch


def cross_attention(x, memory, w_q, w_k, w_v, w_o, num_heads, memory_key_padding_mask=None):
    b, tq, e = x.shape
    tk, d = memory.size(1), e // num_heads
    q = (x @ w_q.T).view(b, tq, num_heads, d).transpose(1, 2)
    k = (memory @ w_k.T).view(b, tk, num_heads, d).transpose(1, 2)
    v = (memory @ w_v.T).view(b, tk, num_heads, d).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    allowed = scores.new_ones(b, 1, 1, tk, dtype=torch.bool)
    if memory_key_padding_mask is not None:
        allowed = (~memory_key_padding_mask)[:, None, None, :]
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    out = (weights @ v).transpose(1, 2).reshape(b, tq, e)
    mha = torch.nn.MultiheadAttention(e, num_heads, bias=False, kdim=memory.size(-1), vdim=memory.size(-1), batch_first=True)
    return mha(x, memory, memory)[0]
