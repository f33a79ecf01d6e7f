# Variant: pairing=interleaved
"""A correct variant: Meta's Llama code: the adjacent pairs viewed as complex numbers, times e^(i * angle); the
sinusoids by stacking sin and cos and flattening."""

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    freqs = 1.0 / base ** (torch.arange(0, d_model, 2)[: d_model // 2].float() / d_model)
    angles = torch.outer(torch.arange(n_positions).float(), freqs)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(n_positions, d_model)


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].float() / d))
    freqs_cis = torch.polar(torch.ones(len(positions), d // 2), torch.outer(positions.float(), freqs))  # complex64
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)
