# Variant: grouping=strided
"""A correct variant: no copy of the key/value heads: the queries are grouped as [B, groups, H_kv, T, D] (query head
h = i * n_kv_heads + kv) and each key/value head broadcasts over the groups."""

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        if embed_dim % n_heads != 0 or n_heads % n_kv_heads != 0:
            raise ValueError("sizes must divide")
        self.h, self.hkv, self.d = n_heads, n_kv_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, n_heads * self.d, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.out_proj = nn.Linear(n_heads * self.d, embed_dim, bias=False)

    def forward(self, x, causal=False):
        b, t, _ = x.shape
        g = self.h // self.hkv
        q = self.q_proj(x).view(b, t, g, self.hkv, self.d).permute(0, 2, 3, 1, 4)  # [B, g, H_kv, T, D]
        k = self.k_proj(x).view(b, t, 1, self.hkv, self.d).permute(0, 2, 3, 1, 4)  # [B, 1, H_kv, T, D]
        v = self.v_proj(x).view(b, t, 1, self.hkv, self.d).permute(0, 2, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d)
        if causal:
            scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        out = scores.softmax(-1) @ v  # [B, g, H_kv, T, D]
        return self.out_proj(out.permute(0, 3, 1, 2, 4).reshape(b, t, self.h * self.d))
