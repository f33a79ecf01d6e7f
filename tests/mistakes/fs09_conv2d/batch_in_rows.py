# Mistake: the batch folded into the columns' rows: every call with more than one input raises ("cannot be
# multiplied"), with or without groups. Not groups' fault: the groups check must not say so.
# Expect: raised RuntimeError

import torch
import torch.nn.functional as F


def pair(value) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> torch.Tensor:
    stride, padding, dilation = pair(stride), pair(padding), pair(dilation)
    n, _, h, w = x.shape
    out_channels, group_channels, kh, kw = weight.shape
    # a window spans dilation * (k - 1) + 1 pixels of the padded input; stride picks every stride-th start
    h_out = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    w_out = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = F.unfold(x, (kh, kw), dilation=dilation, padding=padding, stride=stride)  # [N, C_in * kh * kw, L]
    # unfold lists the channels outermost (c, i, j): each group's channels are one contiguous block of rows
    cols = cols.reshape(n, groups, group_channels * kh * kw, h_out * w_out)
    kernels = weight.reshape(groups, out_channels // groups, group_channels * kh * kw)
    out = torch.mm(weight.reshape(out_channels, -1), cols.reshape(-1, cols.shape[-1])).reshape(n, out_channels, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out
