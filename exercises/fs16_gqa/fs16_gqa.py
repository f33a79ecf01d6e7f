"""fs16 - Grouped-query attention (GQA), from scratch.

GQA keeps n_heads query heads but only n_kv_heads key/value heads (n_kv_heads divides n_heads):
each key/value head serves a group of n_heads // n_kv_heads query heads, which shrinks the
projections and the KV cache. n_kv_heads == 1 is multi-query attention (MQA); n_kv_heads == n_heads
is plain multi-head attention. Run `grade fs16` to check your work.
"""

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    """Self-attention over x [B, T, E] with n_heads query heads and n_kv_heads key/value heads."""

    def __init__(self, embed_dim: int, n_heads: int, n_kv_heads: int):
        """Raise ValueError unless n_heads divides embed_dim and n_kv_heads divides n_heads.

        head_dim = embed_dim // n_heads. Four Linear layers, all with bias=False:
        q_proj: embed_dim -> n_heads * head_dim, k_proj and v_proj: embed_dim -> n_kv_heads * head_dim,
        out_proj: n_heads * head_dim -> embed_dim.
        """
        super().__init__()
        # TODO: check the sizes, keep n_heads, n_kv_heads and head_dim, make the four projections
        raise NotImplementedError

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        """x: [B, T, E] -> [B, T, E]. causal: position i attends positions 0..i only.

        Query head h uses key/value head h // (n_heads // n_kv_heads): consecutive query heads
        share a key/value head (heads 0 and 1 share kv head 0 when n_heads = 4, n_kv_heads = 2).
        """
        # TODO: q [B, n_heads, T, D], k and v [B, n_kv_heads, T, D]
        # TODO: give each query head its key/value head, then attention, merge the heads, out_proj
        raise NotImplementedError


if __name__ == "__main__":
    gqa = GroupedQueryAttention(embed_dim=16, n_heads=4, n_kv_heads=2)
    print(gqa(torch.randn(2, 5, 16), causal=True).shape)
