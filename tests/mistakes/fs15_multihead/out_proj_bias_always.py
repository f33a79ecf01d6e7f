# Mistake: out_proj always has a bias, whatever bias says: wrong only with bias=False, so only that check fails.
# Expect: not expected: out_proj.bias

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, key_padding_mask=None, causal=False):
        b, t, e = x.shape

        def heads(y):
            # [B, T, E] -> [B, T, H, D] -> [B, H, T, D]: features 0..D-1 are head 0, so view first, then transpose
            return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # sqrt of one head's size, not of embed_dim
        allowed = scores.new_ones(t, t, dtype=torch.bool)
        if causal:
            allowed = allowed.tril()
        if key_padding_mask is not None:
            allowed = allowed & ~key_padding_mask[:, None, None, :]  # [B, 1, 1, T]: on the keys
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        # [B, H, T, D] -> [B, T, H, D] -> [B, T, E]: the heads side by side again, in their order
        out = (weights @ v).transpose(1, 2).reshape(b, t, e)
        return self.out_proj(out)
