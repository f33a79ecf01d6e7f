"""fs18 - Incremental decoding with a KV cache, from scratch.

A decoder generates one token at a time. Without a cache, every step would project the keys and
values of all earlier tokens again; with one, each step projects its new tokens only, appends their
keys and values to the cache, and attends over the whole cache. The outputs, step by step, must be
those of causal attention over the whole sequence at once. Run `grade fs18` to check your work.
"""

import math

import torch
from torch import nn


class CachedSelfAttention(nn.Module):
    """Causal multi-head self-attention that decodes step by step with a KV cache."""

    def __init__(self, embed_dim: int, num_heads: int):
        """q_proj, k_proj, v_proj, out_proj = nn.Linear(embed_dim, embed_dim) each (with biases);
        head_dim = embed_dim // num_heads (num_heads divides embed_dim)."""
        super().__init__()
        # TODO: keep num_heads and head_dim, make the four projections
        raise NotImplementedError

    def forward(self, x: torch.Tensor, cache=None):
        """x: [B, T_new, E], the new tokens; cache: None, or (k, v), the keys and values of the T_past
        earlier tokens after k_proj and v_proj, each [B, H, T_past, D].

        Returns (out, (k, v)): out [B, T_new, E]; the cache of all T_past + T_new tokens, in the same
        layout. New token i is at position T_past + i and attends positions 0..T_past + i.
        """
        # TODO: project the new tokens only; append their keys and values to the cache (past first)
        # TODO: causal attention of the new queries over the whole cache, offset by T_past; out_proj
        raise NotImplementedError


if __name__ == "__main__":
    layer = CachedSelfAttention(8, 2)
    x = torch.randn(1, 5, 8)
    out, cache = layer(x[:, :3])
    for t in range(3, 5):
        step, cache = layer(x[:, t : t + 1], cache)
    print(out.shape, step.shape, [c.shape for c in cache])
