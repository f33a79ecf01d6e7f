"""A correct variant: one float mask (the ALiBi bias, -inf outside the window) handed to F.scaled_dot_product_attention."""

import math

import torch
import torch.nn.functional as F


def alibi_slopes(num_heads):
    c = 2 ** int(math.log2(num_heads))
    base = [2.0 ** (-8.0 * h / c) for h in range(1, c + 1)]
    extra = [2.0 ** (-8.0 * h / (2 * c)) for h in range(1, 2 * c + 1, 2)]
    return torch.tensor(base + extra[:num_heads - c], dtype=torch.float32)


def alibi_bias(slopes, t):
    pos = torch.arange(t, dtype=slopes.dtype, device=slopes.device)
    return torch.einsum("h,ij->hij", slopes, pos[None, :] - pos[:, None])


def sliding_window_attention(q, k, v, window, slopes=None):
    t = q.shape[-2]
    pos = torch.arange(t, device=q.device)
    back = pos.unsqueeze(1) - pos.unsqueeze(0)
    keep = (back >= 0) & (back < window)
    mask = torch.zeros(t, t, dtype=q.dtype, device=q.device).masked_fill(~keep, float("-inf"))
    if slopes is not None:
        mask = mask + alibi_bias(slopes, t).to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
