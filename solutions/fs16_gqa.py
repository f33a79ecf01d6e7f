"""Reference solution of fs16 (grouped-query attention, checked against nn.MultiheadAttention with the K/V heads
repeated)."""

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        if embed_dim % n_heads != 0 or n_heads % n_kv_heads != 0:
            raise ValueError("n_heads must divide embed_dim and n_kv_heads must divide n_heads")
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.out_proj = nn.Linear(n_heads * self.head_dim, embed_dim, bias=False)

    def forward(self, x, causal=False):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)  # [B, H, T, D]
        k = self.k_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)  # [B, H_kv, T, D]
        v = self.v_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        # Each key/value head serves `groups` query heads: give every query head its own copy.
        groups = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if causal:
            scores = scores.masked_fill(~scores.new_ones(t, t, dtype=torch.bool).tril(), float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))
