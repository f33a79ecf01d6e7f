"""fs34 - int8 absmax quantization, from scratch.

A weight matrix w [out, in] stored as int8 numbers q and a float32 scale: w is about q * scale.
Symmetric absmax quantization picks the scale so that the largest |w| maps to 127; every entry
is rounded to the nearest integer and clamped to [-127, 127]. Run `grade fs34` to check your work.
"""

import torch
import torch.nn.functional as F


def absmax_scale(w: torch.Tensor) -> torch.Tensor:
    """Per-row scales [rows, 1] of w [rows, cols]: each row's max |w| / 127.

    Computed in float32 (a float16 w is converted first). A row of zeros gets scale 1.0.
    """
    # TODO
    raise NotImplementedError


def quantize(w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """int8 q = w / scale rounded to the nearest integer (halves to even, as torch.round),
    clamped to [-127, 127]. Entries beyond the range are clamped, never wrapped around."""
    # TODO
    raise NotImplementedError


def dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """float32 q * scale."""
    # TODO
    raise NotImplementedError


def int8_linear(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, bias=None) -> torch.Tensor:
    """x [..., in] -> [..., out]: the linear layer of the dequantised weight (plus bias unless None)."""
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    w = torch.randn(4, 8)
    scale = absmax_scale(w)
    q = quantize(w, scale)
    print(q.dtype, scale.shape, (dequantize(q, scale) - w).abs().max().item())
