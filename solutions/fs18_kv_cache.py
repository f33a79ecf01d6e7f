"""Reference solution of fs18 (causal self-attention decoding step by step with a KV cache)."""

import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, cache=None):
        b, t, e = x.shape

        def heads(y):
            return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # [B, H, T, D]

        q = heads(self.q_proj(x))
        k = heads(self.k_proj(x))  # only the new tokens are projected: [B, H, T_new, D]
        v = heads(self.v_proj(x))
        if cache is not None:  # the past first, then the new tokens, on the time axis
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        cache = (k, v)
        past = k.shape[2] - t
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # [B, H, T_new, T_past + T_new]
        # New token i is at position past + i: it sees keys 0..past + i, a lower triangle shifted right by past.
        allowed = scores.new_ones(t, past + t, dtype=torch.bool).tril(diagonal=past)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, e)
        return self.out_proj(out), cache
