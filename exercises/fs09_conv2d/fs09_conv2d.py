"""fs09 - Conv2d from scratch, through F.unfold.

A 2-D convolution slides each kernel over the input and takes, at every position, the sum of the products of the
kernel with the window under it: a cross-correlation, the kernel is not flipped. F.unfold(x, kernel_size, ...)
cuts every window out of x as a column, [N, C_in * kH * kW, L] for L windows, so the whole convolution is a
matrix product of the flattened kernels with those columns.

Use F.unfold (and F.pad if you like); do not use F.conv2d, nn.Conv2d or any other convolution of torch.
Run `grade fs09` to check your work.
"""

import torch
import torch.nn.functional as F


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> torch.Tensor:
    """The 2-D convolution of F.conv2d, with zero padding.

    x: [N, C_in, H, W]; weight: [C_out, C_in / groups, kH, kW]; bias: [C_out] or None.
    stride, padding, dilation: an int, or a pair (height, width). `padding` adds rows and columns of zeros on each side of x.
    groups splits the input and the output channels into `groups` blocks: output block g sees input block g only.
    Returns [N, C_out, H_out, W_out] in the dtype of x, where
    H_out = (H + 2 * padding[0] - dilation[0] * (kH - 1) - 1) // stride[0] + 1, and W_out alike.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    x, weight, bias = torch.randn(2, 4, 6, 7), torch.randn(6, 2, 3, 2), torch.randn(6)
    out = conv2d(x, weight, bias, stride=(2, 1), padding=1, groups=2)
    print(out.shape, "expected", (2, 6, 3, 8))
