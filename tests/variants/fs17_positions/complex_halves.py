# Variant: pairing=halves
"""A correct variant: the two halves as the real and imaginary parts of complex numbers, times e^(i * angle)."""

import math

import torch


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    out = torch.empty(n_positions, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        angle = torch.arange(n_positions, dtype=torch.float64) * math.exp(-2 * i * math.log(base) / d_model)
        out[:, 2 * i], out[:, 2 * i + 1] = angle.sin(), angle.cos()
    return out.float()


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64), positions.double()[:, None] * theta)
    z = torch.complex(x[..., : d // 2].double(), x[..., d // 2 :].double()) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
