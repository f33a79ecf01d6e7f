# Mistake: splits every projection with a reshape straight to [B, H, T, D] and merges it back the same way.
# Expect: a view straight to [B, H, T, D]

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        if embed_dim % n_heads != 0 or n_heads % n_kv_heads != 0:
            raise ValueError("sizes do not divide")
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.out_proj = nn.Linear(n_heads * self.head_dim, embed_dim, bias=False)

    def forward(self, x, causal=False):
        b, t, _ = x.shape
        q = self.q_proj(x).reshape(b, self.n_heads, t, self.head_dim)
        k = self.k_proj(x).reshape(b, self.n_kv_heads, t, self.head_dim)
        v = self.v_proj(x).reshape(b, self.n_kv_heads, t, self.head_dim)
        groups = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if causal:
            scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.reshape(b, t, self.n_heads * self.head_dim))
