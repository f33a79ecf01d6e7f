# Variant: grouping=consecutive
"""A correct variant: no copy of the key/value heads: the queries are grouped as [B, H_kv, groups, T, D] and each
key/value head broadcasts over its group."""

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("n_heads must divide embed_dim")
        if n_heads % n_kv_heads != 0:
            raise ValueError("n_kv_heads must divide n_heads")
        self.h, self.hkv, self.d = n_heads, n_kv_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, n_heads * self.d, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.out_proj = nn.Linear(n_heads * self.d, embed_dim, bias=False)

    def forward(self, x, causal=False):
        b, t, _ = x.shape
        g = self.h // self.hkv
        q = self.q_proj(x).view(b, t, self.hkv, g, self.d).permute(0, 2, 3, 1, 4)  # [B, H_kv, g, T, D]
        k = self.k_proj(x).view(b, t, self.hkv, 1, self.d).permute(0, 2, 3, 1, 4)  # [B, H_kv, 1, T, D]
        v = self.v_proj(x).view(b, t, self.hkv, 1, self.d).permute(0, 2, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        if causal:
            scores = scores + torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1)
        out = torch.matmul(scores.softmax(-1), v)  # [B, H_kv, g, T, D]: query head = kv head * g + i
        return self.out_proj(out.permute(0, 3, 1, 2, 4).reshape(b, t, self.h * self.d))
