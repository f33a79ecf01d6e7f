"""A correct variant: einops-free reshapes, F.scaled_dot_product_attention per head with a bool mask of the keys."""

import torch
import torch.nn.functional as F


def cross_attention(x, memory, w_q, w_k, w_v, w_o, num_heads, memory_key_padding_mask=None):
    B, Tq, E = x.shape
    Tk = memory.shape[1]
    D = E // num_heads

    def split(t, T):
        return t.reshape(B, T, num_heads, D).permute(0, 2, 1, 3)

    q = split(F.linear(x, w_q), Tq)
    k = split(F.linear(memory, w_k), Tk)
    v = split(F.linear(memory, w_v), Tk)
    mask = None
    if memory_key_padding_mask is not None:
        mask = (~memory_key_padding_mask).reshape(B, 1, 1, Tk)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = torch.nan_to_num(out, nan=0.0)
    return F.linear(out.permute(0, 2, 1, 3).reshape(B, Tq, E), w_o)
