"""fs33 - Multi-head latent attention (MLA, DeepSeek-V2), from scratch.

MLA caches one small latent per token instead of every head's keys and values: the keys and
values are rebuilt from it by an up-projection. RoPE cannot pass through that projection, so a
few extra features per head carry the position (decoupled RoPE): one rotated key shared by all
heads, cached beside the latent. Run `grade fs33` to check your work.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE (fs17) over x [..., T, D] at positions 0..T-1, rotating the pairs (2i, 2i + 1).

    Pair i turns by the angle position * base ** (-2i / D).
    """
    # TODO
    raise NotImplementedError


class MultiHeadLatentAttention(nn.Module):
    """Causal self-attention over x [B, T, d_model] whose keys and values come from a latent."""

    def __init__(self, d_model: int, n_heads: int, head_dim: int, kv_rank: int, rope_dim: int):
        """Four Linear layers, all with bias=False:
        q_proj: d_model -> n_heads * (head_dim + rope_dim), kv_down: d_model -> kv_rank + rope_dim,
        kv_up: kv_rank -> n_heads * 2 * head_dim, o_proj: n_heads * head_dim -> d_model.
        """
        super().__init__()
        # TODO: keep the sizes, make the four projections
        raise NotImplementedError

    def latent(self, x: torch.Tensor) -> torch.Tensor:
        """What a KV cache keeps per token: [B, T, kv_rank + rope_dim] = cat(c_kv, rope(k_pe)),
        where kv_down(x) = cat(c_kv, k_pe)."""
        # TODO
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [B, T, d_model] -> [B, T, d_model], causal.

        Per head: the query is cat(q_nope, rope(q_pe)) from q_proj(x) viewed [B, T, H, head_dim + rope_dim];
        the key is cat(k_nope, the shared rotated k_pe) and the value v, from kv_up(c_kv) viewed
        [B, T, H, 2 * head_dim] (head_dim of key, then head_dim of value). Scale 1/sqrt(head_dim + rope_dim).
        """
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    mla = MultiHeadLatentAttention(d_model=16, n_heads=4, head_dim=4, kv_rank=6, rope_dim=2)
    x = torch.randn(2, 5, 16)
    print(mla(x).shape, mla.latent(x).shape)
