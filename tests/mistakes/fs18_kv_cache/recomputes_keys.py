# Mistake: keeps every token seen on the module and projects them all again at each call (the cache is only returned).
# Expect: projected
# Variant: layout=bhtd

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
        self.seen = None

    def forward(self, x, cache=None):
        b, t, e = x.shape
        self.seen = x if cache is None else torch.cat([self.seen, x], dim=1)
        n = self.seen.shape[1]

        def heads(y, length):
            return y.view(b, length, self.num_heads, self.head_dim).transpose(1, 2)

        q = heads(self.q_proj(x), t)
        k, v = heads(self.k_proj(self.seen), n), heads(self.v_proj(self.seen), n)
        past = n - t
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        allowed = torch.ones(t, n, dtype=torch.bool).tril(diagonal=past)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, e)
        return self.out_proj(out), (k, v)
