"""fs31 - A Transformer decoder block, from scratch.

The block of Llama, Mistral and Qwen: pre-norm (an RMSNorm before each sub-layer), a residual
connection around each, causal self-attention, then a SwiGLU feed-forward. You wrote each piece
before (fs07, fs03, fs15, fs16); here they are wired together. Run `grade fs31` to check your work.
"""

import torch
import torch.nn.functional as F
from torch import nn


class DecoderBlock(nn.Module):
    """A pre-norm decoder block over x [B, T, d_model]."""

    def __init__(self, d_model: int, n_heads: int, d_hidden: int, eps: float = 1e-6):
        """Raise ValueError unless n_heads divides d_model.

        head_dim = d_model // n_heads. Layers (every Linear with bias=False):
        attn_norm and ffn_norm: RMSNorm over d_model with this eps (nn.RMSNorm is fine),
        q_proj: d_model -> d_model, o_proj: d_model -> d_model,
        k_proj and v_proj: d_model -> d_model (as many key/value heads as query heads).
        gate_proj and up_proj: d_model -> d_hidden, down_proj: d_hidden -> d_model.
        """
        super().__init__()
        # TODO: check the sizes and make the nine layers
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [B, T, d_model] -> [B, T, d_model].

        h = x + attention(attn_norm(x)), causal: position i attends positions 0..i;
        out = h + down_proj(silu(gate_proj(n)) * up_proj(n)) with n = ffn_norm(h).
        """
        # TODO: the attention sub-layer with its residual, then the feed-forward with its residual
        raise NotImplementedError


if __name__ == "__main__":
    block = DecoderBlock(16, 4, 40)
    print(block(torch.randn(2, 5, 16)).shape)
