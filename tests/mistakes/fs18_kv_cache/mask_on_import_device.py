# Mistake: the device is chosen once, at import, and the causal mask is made on it: "cuda" whenever a GPU is
# present.
# Expect: when your file is imported

import math

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


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
        allowed = torch.ones(t, past + t, dtype=torch.bool, device=DEVICE).tril(diagonal=past)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, e)
        return self.out_proj(out), cache
