# Mistake: copies nn.MultiheadAttention's own layout, [T, B, E] (batch_first=False), onto a batch-first input.
# Expect: read as [T, B, E]

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError("num_heads must divide embed_dim")
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, x, key_padding_mask=None, causal=False):
        t, b, e = x.shape  # (T, B, E), as F.multi_head_attention_forward reads it

        def heads(y):
            return y.reshape(t, b * self.num_heads, self.head_dim).transpose(0, 1).reshape(b, self.num_heads, t, self.head_dim)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        allowed = torch.ones(t, t, dtype=torch.bool)
        if causal:
            allowed = allowed.tril()
        if key_padding_mask is not None:
            allowed = allowed & ~key_padding_mask[:, None, None, :]
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v).reshape(b * self.num_heads, t, self.head_dim).transpose(0, 1).reshape(t, b, e)
        return self.out_proj(out)
