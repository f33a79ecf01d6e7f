# Correct: windows by Tensor.unfold (a dilated window sliced out of a wider one), argmax, index_add_.
import torch
import torch.nn.functional as F


def pair(value):
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


class MaxPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        kh, kw = pair(kernel_size)
        sh, sw = pair(stride)
        ph, pw = pair(padding)
        span_h, span_w = (kh - 1) + 1, (kw - 1) + 1
        padded = F.pad(x, (pw, pw, ph, ph), value=-torch.inf)
        win = padded.unfold(2, span_h, sh).unfold(3, span_w, sw)  # [N, C, H_out, W_out, span_h, span_w]
        win = win[..., ::(span_h - 1) // max(kh - 1, 1) or 1, ::(span_w - 1) // max(kw - 1, 1) or 1]
        flat = win.reshape(*win.shape[:4], kh * kw)
        arg = flat.argmax(dim=-1)
        out = flat.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
        h_out, w_out = out.shape[2], out.shape[3]
        step_h, step_w = (span_h - 1) // max(kh - 1, 1), (span_w - 1) // max(kw - 1, 1)
        row = torch.arange(h_out).view(-1, 1) * sh + arg // kw * step_h
        col = torch.arange(w_out).view(1, -1) * sw + arg % kw * step_w
        ctx.save_for_backward((row - ph) * x.shape[3] + (col - pw))
        ctx.shape = x.shape
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        n, c, h, w = ctx.shape
        grad = torch.zeros(n * c, h * w, dtype=grad_output.dtype)
        for k in range(n * c):  # one plane at a time: index_add_ adds where two windows share a maximum
            grad[k].index_add_(0, index.reshape(n * c, -1)[k], grad_output.reshape(n * c, -1)[k])
        return grad.reshape(n, c, h, w), None, None, None


def max_pool2d(x, kernel_size, stride=None, padding=0):
    if stride is None:
        stride = kernel_size
    return MaxPool2dFunction.apply(x, kernel_size, stride, padding)
