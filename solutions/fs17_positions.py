"""Reference solution of fs17 (sinusoidal position encodings and rotary position embeddings)."""

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    position = torch.arange(n_positions, dtype=torch.float32)[:, None]  # [T, 1]
    inv_freq = base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)  # 1 / base^(2i/d): [d/2]
    angles = position * inv_freq  # [T, d/2]
    pe = torch.empty(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)  # sin at the even features, cos at the odd ones (interleaved, not halves)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # theta_i = base^(-2i/D)
    # The angles in float32 whatever x's dtype: bfloat16 cannot even hold a position of 3000.
    angles = positions.float()[:, None] * inv_freq  # [T, D/2]
    cos, sin = angles.cos(), angles.sin()
    xf = x.float()
    a, b = xf[..., 0::2], xf[..., 1::2]  # pair i = features (2i, 2i + 1)
    out = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    return out.to(x.dtype)
