"""A correct variant: the sinusoids from exp/log, written column by column; RoPE with one angle per feature and a
rotated copy of x, as Hugging Face writes it (cos and sin cast to x's dtype before the products)."""

import math

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    pe = torch.zeros(n_positions, d_model)
    position = torch.arange(0, n_positions).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    angles = torch.outer(positions.float(), inv_freq)  # [T, D/2], float32
    emb = angles.repeat_interleave(2, dim=-1)  # [T, D]: one angle per feature
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2) * sin
