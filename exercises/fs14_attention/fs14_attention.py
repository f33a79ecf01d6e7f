"""fs14 - Scaled dot-product attention, from scratch, with a causal mask and a key mask.

attention(q, k, v) = softmax(q @ k^T / sqrt(d_head)) @ v, where d_head is the last size of q and k.
Masked scores become -inf before the softmax, so a masked key gets exactly zero weight.
Write it with tensor operations (matmul, masked_fill, softmax...), without
F.scaled_dot_product_attention or nn.MultiheadAttention. Run `grade fs14` to check your work.
"""

import torch


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention of the queries q over the keys k and values v.

    q: [B, H, Tq, D], k: [B, H, Tk, D], v: [B, H, Tk, Dv]; returns [B, H, Tq, Dv] in q's dtype
    (float16 and bfloat16 included).
    causal: when True (then Tq == Tk), query i attends keys 0..i only.
    key_padding_mask: None, or a bool tensor [B, Tk]: True where the key is padding, to be ignored (as nn.MultiheadAttention's key_padding_mask).
    A query left with no key to attend gets a row of zeros (never NaN).
    """
    # TODO: scores [B, H, Tq, Tk] scaled by 1/sqrt(d_head); -inf where causal or the key mask forbids a key
    # TODO: softmax over the keys, zeros for a query with no key left, then the weighted sum of v
    raise NotImplementedError


if __name__ == "__main__":
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8)
    print(attention(q, k, v, causal=True).shape)
