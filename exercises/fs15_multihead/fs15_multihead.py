"""fs15 - Multi-head attention as a module, from scratch.

The module projects x into queries, keys and values, splits the embedding into num_heads heads of
head_dim = embed_dim // num_heads features ([B, T, E] -> [B, T, H, D] -> [B, H, T, D]), runs
scaled dot-product attention in every head at once, merges the heads back to [B, T, E] and applies
the output projection: what nn.MultiheadAttention(batch_first=True) computes. Do not use
nn.MultiheadAttention (F.scaled_dot_product_attention, or your fs14 attention, is fine for the
per-head part). Run `grade fs15` to check your work.
"""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention over x of shape [B, T, E] (batch first)."""

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True):
        """Raise ValueError unless num_heads divides embed_dim.

        q_proj, k_proj and v_proj = nn.Linear(embed_dim, embed_dim, bias=bias) each (three layers),
        out_proj = nn.Linear(embed_dim, embed_dim, bias=bias).
        """
        super().__init__()
        # TODO: check that num_heads divides embed_dim; keep num_heads and head_dim
        # TODO: the projections, named exactly as above
        raise NotImplementedError

    def forward(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None, causal: bool = False
    ) -> torch.Tensor:
        """x: [B, T, E] -> [B, T, E].

        key_padding_mask: None, or a bool tensor [B, T], True where the key is padding (ignored).
        causal: when True, position i attends positions 0..i only.
        """
        # TODO: project, then split the heads: [B, T, E] -> [B, T, H, D] -> [B, H, T, D]
        # TODO: attention in every head, merge the heads back to [B, T, E], then out_proj
        raise NotImplementedError


if __name__ == "__main__":
    mha = MultiHeadAttention(8, 2)
    print(mha(torch.randn(2, 5, 8), causal=True).shape)
