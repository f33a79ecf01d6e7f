# Mistake: no guard for a row (tensor) of zeros: its scale is 0 and quantize gives NaN.
# Expect: a scale of 0

import torch
import torch.nn.functional as F


def absmax_scale(w):
    amax = w.float().abs().amax(dim=1, keepdim=True)  # in float32 even for a float16 w
    # A row of zeros would give scale 0 and 0 / 0 = NaN: its scale is 1 (its q is 0 either way).
    return amax / 127


def quantize(w, scale):
    # w.float(): a float16 w divided by a 0-dim float32 scale would stay float16.
    # Round halves to even, then clamp to [-127, 127] before the cast: a cast to int8 wraps around.
    return torch.round(w.float() / scale).clamp(-127, 127).to(torch.int8)


def dequantize(q, scale):
    return q.to(torch.float32) * scale


def int8_linear(x, q, scale, bias=None):
    return F.linear(x, dequantize(q, scale), bias)
