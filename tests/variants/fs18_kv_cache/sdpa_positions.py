"""A correct variant: the mask from the positions of the queries and the keys, F.scaled_dot_product_attention."""

import torch
import torch.nn.functional as F
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(self, name, nn.Linear(embed_dim, embed_dim))

    def forward(self, x, cache=None):
        b, t, e = x.shape

        def heads(y):
            return y.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

        q = heads(self.q_proj(x))
        k = heads(self.k_proj(x))  # only the new tokens are projected: [B, H, T_new, D]
        v = heads(self.v_proj(x))
        if cache is not None:  # the past first, then the new tokens, on the time axis
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        cache = (k, v)
        total = k.shape[2]
        query_pos = torch.arange(total - t, total)[:, None]
        key_pos = torch.arange(total)[None, :]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=key_pos <= query_pos)
        return self.out_proj(out.transpose(1, 2).flatten(2)), cache
