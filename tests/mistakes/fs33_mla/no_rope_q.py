# Mistake: rotates the shared key but not the queries' rope part.
# Expect: the queries' rope part left unrotated

import math

import torch
import torch.nn.functional as F
from torch import nn


def rope(x, base=10000.0):
    """RoPE over x [..., T, D] at positions 0..T-1, pairs (2i, 2i + 1)."""
    t, d = x.shape[-2], x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # [D/2]
    angles = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq  # [T, D/2]
    cos, sin = angles.cos().to(x), angles.sin().to(x)  # on x's device, in x's dtype
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model, n_heads, head_dim, kv_rank, rope_dim):
        super().__init__()
        self.n_heads, self.head_dim, self.kv_rank, self.rope_dim = n_heads, head_dim, kv_rank, rope_dim
        self.q_proj = nn.Linear(d_model, n_heads * (head_dim + rope_dim), bias=False)
        self.kv_down = nn.Linear(d_model, kv_rank + rope_dim, bias=False)
        self.kv_up = nn.Linear(kv_rank, n_heads * 2 * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, d_model, bias=False)

    def latent(self, x):
        # What a KV cache keeps per token: the latent and the rotated shared key, kv_rank + rope_dim numbers.
        c_kv, k_pe = self.kv_down(x).split([self.kv_rank, self.rope_dim], dim=-1)
        return torch.cat([c_kv, rope(k_pe)], dim=-1)

    def forward(self, x):
        b, t, _ = x.shape
        h, d, r = self.n_heads, self.head_dim, self.rope_dim
        q = self.q_proj(x).view(b, t, h, d + r).transpose(1, 2)  # [B, H, T, d + r]
        q_nope, q_pe = q.split([d, r], dim=-1)
        c_kv, k_pe = self.latent(x).split([self.kv_rank, r], dim=-1)
        kv = self.kv_up(c_kv).view(b, t, h, 2 * d).transpose(1, 2)  # per head: d of key, then d of value
        k_nope, v = kv.split([d, d], dim=-1)
        # The rotated key is one head shared by all: broadcast it over the heads.
        k = torch.cat([k_nope, k_pe[:, None].expand(b, h, t, r)], dim=-1)
        q = torch.cat([q_nope, q_pe], dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d + r)  # the dot product is over d + r features
        future = scores.new_ones(t, t, dtype=torch.bool).triu(1)
        out = F.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, t, h * d))
