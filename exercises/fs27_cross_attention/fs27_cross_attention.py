"""fs27 - Multi-head cross-attention with the encoder's padding mask, from scratch.

In an encoder-decoder Transformer, the decoder's cross-attention takes its queries from the decoder's states x
and its keys and values from the encoder's output, memory: each target position reads the whole source
sentence. There is no causal mask here; the only mask is the source's padding, on the keys' axis. Write it with
tensor operations (F.scaled_dot_product_attention is fine for the per-head part; nn.MultiheadAttention is not).
Run `grade fs27` to check your work.
"""

import math

import torch


def cross_attention(
    x: torch.Tensor,
    memory: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    num_heads: int,
    memory_key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Cross-attention of the decoder states x over the encoder output memory.

    x: [B, Tq, E], memory: [B, Tk, M]. Weights as nn.Linear stores them ([out, in], y = x @ w.T, no bias):
    w_q [E, E], w_k [E, M], w_v [E, M], w_o [E, E]. num_heads divides E; head_dim = E // num_heads.
    memory_key_padding_mask: None, or a bool tensor [B, Tk], True where the source token is padding (nn.Transformer's memory_key_padding_mask).
    Returns [B, Tq, E] in x's dtype; a query whose source is padding only gets zeros (never NaN).
    """
    # TODO: q from x, k and v from memory, each split into heads [B, H, T, head_dim]
    # TODO: scaled scores, -inf at the source's padding keys, softmax over the keys, merge the heads, then w_o
    raise NotImplementedError


if __name__ == "__main__":
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 6)
    w_q, w_k, w_v, w_o = torch.randn(8, 8), torch.randn(8, 6), torch.randn(8, 6), torch.randn(8, 8)
    print(cross_attention(x, memory, w_q, w_k, w_v, w_o, num_heads=2).shape)
