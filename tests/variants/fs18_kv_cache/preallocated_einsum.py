# Variant: layout=bthd
"""A correct variant: einsum on the [B, T, H, D] cache directly (no transpose), an additive mask, the new keys and
values written into a fresh buffer after the old ones."""

import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError("num_heads must divide embed_dim")
        self.h, self.d = num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, cache=None):
        b, t, e = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.d)
        k_new = self.k_proj(x).view(b, t, self.h, self.d)
        v_new = self.v_proj(x).view(b, t, self.h, self.d)
        past = 0 if cache is None else cache[0].shape[1]
        k = x.new_empty(b, past + t, self.h, self.d)
        v = x.new_empty(b, past + t, self.h, self.d)
        if cache is not None:
            k[:, :past], v[:, :past] = cache
        k[:, past:], v[:, past:] = k_new, v_new
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d)
        future = torch.arange(past + t)[None, :] > torch.arange(past, past + t)[:, None]
        scores = scores + torch.zeros(t, past + t, dtype=x.dtype).masked_fill(future, float("-inf"))
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(dim=-1), v).reshape(b, t, e)
        return self.out_proj(out), (k, v)
