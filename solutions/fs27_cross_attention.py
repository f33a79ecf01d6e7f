"""Reference solution of fs27 (multi-head cross-attention with the encoder's padding mask)."""

import math

import torch


def cross_attention(x, memory, w_q, w_k, w_v, w_o, num_heads, memory_key_padding_mask=None):
    b, tq, e = x.shape
    tk, d = memory.size(1), e // num_heads
    # Queries from the decoder, keys and values from the encoder; each split into heads [B, H, T, D].
    q = (x @ w_q.T).view(b, tq, num_heads, d).transpose(1, 2)
    k = (memory @ w_k.T).view(b, tk, num_heads, d).transpose(1, 2)
    v = (memory @ w_v.T).view(b, tk, num_heads, d).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)  # [B, H, Tq, Tk]: one head's size in the scale
    # No causal mask: every decoder position may read the whole source. Only the encoder's padding is hidden.
    allowed = scores.new_ones(b, 1, 1, tk, dtype=torch.bool)  # on x's device
    if memory_key_padding_mask is not None:
        allowed = (~memory_key_padding_mask)[:, None, None, :]  # [B, 1, 1, Tk]: the keys' axis
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)  # a source of padding only: zeros
    out = (weights @ v).transpose(1, 2).reshape(b, tq, e)  # merge the heads back: [B, Tq, E]
    return out @ w_o.T
