# Mistake: makes the window indices with torch.arange on the GPU when there is one, not on x's device.
# Expect: sends tensors to it
import torch
import torch.nn.functional as F


def pair(value) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)


class MaxPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        (kh, kw), (sh, sw), (ph, pw) = pair(kernel_size), pair(stride), pair(padding)
        n, c, h, w = x.shape
        h_out = (h + 2 * ph - (kh - 1) - 1) // sh + 1
        w_out = (w + 2 * pw - (kw - 1) - 1) // sw + 1
        # pad with -inf: a padded cell never wins a window, whatever the sign of x
        padded = F.pad(x, (pw, pw, ph, ph), value=float("-inf"))
        cols = F.unfold(padded, (kh, kw), stride=(sh, sw)).reshape(n, c, kh * kw, h_out * w_out)
        out, arg = cols.max(dim=2)  # the first maximum of each window, the one F.max_pool2d picks
        # where each window's maximum lies in the padded input, as a flat index into its [H + 2ph, W + 2pw] plane
        rows = torch.arange(h_out, device="cuda" if torch.cuda.is_available() else "cpu").repeat_interleave(w_out) * sh + arg // kw
        columns = torch.arange(w_out, device="cuda" if torch.cuda.is_available() else "cpu").repeat(h_out) * sw + arg % kw
        ctx.save_for_backward(rows * padded.shape[3] + columns)
        ctx.sizes = (padded.shape, ph, pw, h, w)
        return out.reshape(n, c, h_out, w_out)

    @staticmethod
    def backward(ctx, grad_output):
        (where,) = ctx.saved_tensors
        shape, ph, pw, h, w = ctx.sizes
        grad = grad_output.new_zeros(shape[0], shape[1], shape[2] * shape[3])
        # add, not assign: a cell that is the maximum of several overlapping windows gets all their gradients
        grad.scatter_add_(2, where, grad_output.flatten(2))
        grad = grad.reshape(shape)[:, :, ph:ph + h, pw:pw + w]  # the padding's cells take no gradient back
        return grad, None, None, None


def max_pool2d(x: torch.Tensor, kernel_size, stride=None, padding=0) -> torch.Tensor:
    return MaxPool2dFunction.apply(x, kernel_size, kernel_size if stride is None else stride, padding)
