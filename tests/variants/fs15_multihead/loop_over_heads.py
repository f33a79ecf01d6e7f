"""A correct variant: one head at a time, slicing its block of features, the heads concatenated back."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide {embed_dim} features")
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, x, key_padding_mask=None, causal=False):
        def heads(y):
            return y  # the heads are sliced below, one block of head_dim features each

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        t = x.shape[1]
        bias = torch.zeros(x.shape[0], t, t, dtype=x.dtype)
        if causal:
            bias = bias.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        if key_padding_mask is not None:
            bias = bias.masked_fill(key_padding_mask[:, None, :], float("-inf"))
        outs = []
        for i in range(self.num_heads):
            block = slice(i * self.head_dim, (i + 1) * self.head_dim)
            scores = q[..., block] @ k[..., block].transpose(1, 2) / math.sqrt(self.head_dim) + bias
            outs.append(torch.softmax(scores, dim=-1) @ v[..., block])
        return self.out_proj(torch.cat(outs, dim=-1))
