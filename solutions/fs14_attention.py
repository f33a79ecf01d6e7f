"""Reference solution of fs14 (scaled dot-product attention with a causal mask and a key mask)."""

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # [B, H, Tq, Tk]: scale by sqrt(d_head)
    # One bool mask of the keys each query may attend, broadcast to the scores' shape.
    allowed = scores.new_ones(scores.shape[-2:], dtype=torch.bool)  # on q's device
    if causal:
        allowed = allowed.tril()  # query i sees keys 0..i
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask)[:, None, None, :]  # [B, 1, 1, Tk]: same keys for each head, query
    # -inf, not 0 or -1e9: exp(-inf) is exactly 0, and -inf exists in float16 too.
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    # A query with no key to attend has a softmax of 0/0 = NaN: the statement asks zeros there.
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    return weights @ v
