"""A correct variant: unflatten/permute for the heads, F.scaled_dot_product_attention per head (allowed here)."""

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError("embed_dim must be a multiple of num_heads")
        self.h = num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, x, key_padding_mask=None, causal=False):
        def heads(y):
            return y.unflatten(-1, (self.h, -1)).permute(0, 2, 1, 3)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        t = x.shape[1]
        keep = torch.ones(x.shape[0], 1, t, t, dtype=torch.bool)
        if causal:
            keep = keep & torch.ones(t, t, dtype=torch.bool).tril()
        if key_padding_mask is not None:
            keep = keep & ~key_padding_mask.view(x.shape[0], 1, 1, t)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return self.out_proj(out.permute(0, 2, 1, 3).flatten(2))
