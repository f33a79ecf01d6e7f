# Mistake: copies a cos/sin table built for the other pairing: feature j gets another pair's angle.
# Expect: tables laid out for the other pairing

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    position = torch.arange(n_positions, dtype=torch.float32)[:, None]
    inv_freq = base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = position * inv_freq
    pe = torch.empty(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def rope(x, positions, base=10000.0):
    d, dtype = x.shape[-1], x.dtype
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angles = positions.float()[:, None] * inv_freq
    cos, sin = angles.cos(), angles.sin()
    x = x.float()
    cos, sin = (torch.cat([angles, angles], dim=-1)).cos(), (torch.cat([angles, angles], dim=-1)).sin()
    out = x * cos + torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2) * sin
    return out.to(dtype)
