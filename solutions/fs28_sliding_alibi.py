"""Reference solution of fs28 (sliding-window causal attention with ALiBi biases)."""

import math

import torch


def alibi_slopes(num_heads):
    def powers(n):  # n a power of two: 2^(-8/n), 2^(-16/n), ..., 2^(-8)
        return [2 ** (-8 * (i + 1) / n) for i in range(n)]

    closest = 2 ** int(math.floor(math.log2(num_heads)))
    # Not a power of two: the slopes of the power of two below, then every other slope of twice as many heads.
    slopes = powers(closest) + powers(2 * closest)[0::2][:num_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(slopes, t):
    pos = torch.arange(t, device=slopes.device)
    distance = pos[None, :] - pos[:, None]  # [T, T]: j - i, <= 0 for the keys a causal query sees
    return slopes[:, None, None] * distance  # [H, T, T]: one slope per head


def sliding_window_attention(q, k, v, window, slopes=None):
    t = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # the scores, [B, H, T, T]
    if slopes is not None:
        scores = scores + alibi_bias(slopes, t).to(scores.dtype)  # added before the softmax, per head
    pos = torch.arange(t, device=q.device)
    back = pos[:, None] - pos[None, :]  # i - j: how far key j lies behind query i
    allowed = (back >= 0) & (back < window)  # causal, and inside the window
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights @ v
