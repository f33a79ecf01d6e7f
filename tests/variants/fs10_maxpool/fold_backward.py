# Correct: the first maximum as a one-hot mask over each window; F.fold adds the windows' gradients back into x.
import torch
import torch.nn.functional as F


def pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


class MaxPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        (kh, kw), (sh, sw), (ph, pw) = pair(kernel_size), pair(stride), pair(padding)
        n, c, h, w = x.shape
        h_out = (h + 2 * ph - (kh - 1) - 1) // sh + 1
        w_out = (w + 2 * pw - (kw - 1) - 1) // sw + 1
        padded = F.pad(x, (pw, pw, ph, ph), value=float("-inf"))
        cols = F.unfold(padded, (kh, kw), stride=(sh, sw)).reshape(n, c, kh * kw, h_out * w_out)
        out, arg = cols.max(dim=2, keepdim=True)
        ctx.save_for_backward(torch.zeros_like(cols).scatter_(2, arg, 1.0))
        ctx.settings = dict(output_size=(h, w), kernel_size=(kh, kw), padding=(ph, pw), stride=(sh, sw))
        return out.reshape(n, c, h_out, w_out)

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        n, c = grad_output.shape[:2]
        share = mask * grad_output.flatten(2).unsqueeze(2)
        return F.fold(share.flatten(1, 2), **ctx.settings), None, None, None


def max_pool2d(x, kernel_size, stride=None, padding=0):
    return MaxPool2dFunction.apply(x, kernel_size, kernel_size if stride is None else stride, padding)
