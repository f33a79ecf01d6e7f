"""A correct variant: an index of the key/value head of every query head, index_select, then
F.scaled_dot_product_attention (without enable_gqa)."""

import torch
import torch.nn.functional as F
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        if embed_dim % n_heads or n_heads % n_kv_heads:
            raise ValueError(f"bad sizes {embed_dim}, {n_heads}, {n_kv_heads}")
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.head_dim, bias=False)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, x, causal=False):
        def heads(y):
            return y.unflatten(-1, (-1, self.head_dim)).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        groups = self.n_heads // self.n_kv_heads
        index = torch.arange(self.n_heads) // groups
        k, v = k.index_select(1, index), v.index_select(1, index)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.out_proj(out.transpose(1, 2).flatten(2))
