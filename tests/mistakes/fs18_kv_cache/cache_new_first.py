# Mistake: appends the new keys and values before the old ones.
# Expect: new keys before the old ones
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

    def forward(self, x, cache=None):
        b, t, e = x.shape

        def heads(y):
            return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

        q = heads(self.q_proj(x))
        k = heads(self.k_proj(x))
        v = heads(self.v_proj(x))
        if cache is not None:
            k, v = torch.cat([k, cache[0]], dim=2), torch.cat([v, cache[1]], dim=2)
        cache = (k, v)
        past = k.shape[2] - t
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
      
        allowed = scores.new_ones(t, past + t, dtype=torch.bool).tril(diagonal=past)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, e)
        return self.out_proj(out), cache
