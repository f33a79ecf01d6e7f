# Mistake: uses the exponent i / d_model (torch.arange(d_model // 2) / d_model) instead of 2i / d_model.
# Expect: the exponent i / d_model

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    position = torch.arange(n_positions, dtype=torch.float32)[:, None]
    inv_freq = base ** (-torch.arange(d_model // 2, dtype=torch.float32) / d_model)
    angles = position * inv_freq
    pe = torch.empty(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angles = positions.float()[:, None] * inv_freq
    cos, sin = angles.cos(), angles.sin()
    xf = x.float()
    a, b = xf[..., 0::2], xf[..., 1::2]  # pair i = features (2i, 2i + 1)
    out = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    return out.to(x.dtype)
