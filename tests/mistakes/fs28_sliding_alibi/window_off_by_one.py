# Mistake: counts the window with the other convention (< for <=, or <= for <).
# Expect: one key too wide

import math

import torch


def alibi_slopes(num_heads):
    def powers(n):
        return [2 ** (-8 * (i + 1) / n) for i in range(n)]

    closest = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = powers(closest) + powers(2 * closest)[0::2][:num_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(slopes, t):
    pos = torch.arange(t, device=slopes.device)
    distance = pos[None, :] - pos[:, None]
    return slopes[:, None, None] * distance


def sliding_window_attention(q, k, v, window, slopes=None):
    t = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if slopes is not None:
        scores = scores + alibi_bias(slopes, t).to(scores.dtype)
    pos = torch.arange(t, device=q.device)
    back = pos[:, None] - pos[None, :]
    allowed = (back >= 0) & (back <= window)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v
