# Mistake: computes max pooling with plain tensor operations and lets autograd do the backward.
# Expect: not by an autograd.Function of yours
import torch
import torch.nn.functional as F


class MaxPool2dFunction(torch.autograd.Function):
    pass


def max_pool2d(x, kernel_size, stride=None, padding=0):
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    (kh, kw), (ph, pw) = pair(kernel_size), pair(padding)
    (sh, sw) = pair(kernel_size if stride is None else stride)
    n, c, h, w = x.shape
    h_out = (h + 2 * ph - (kh - 1) - 1) // sh + 1
    w_out = (w + 2 * pw - (kw - 1) - 1) // sw + 1
    padded = F.pad(x, (pw, pw, ph, ph), value=float("-inf"))
    cols = F.unfold(padded, (kh, kw), stride=(sh, sw)).reshape(n, c, kh * kw, h_out * w_out)
    return cols.max(dim=2).values.reshape(n, c, h_out, w_out)
