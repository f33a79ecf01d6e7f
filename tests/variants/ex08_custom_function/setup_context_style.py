"""A correct variant: the newer forward/setup_context split, F.linear in forward, einsum and
torch.mm in backward, bias saved through a flag, a detach-trick fake_quantize."""
# Variant: layout=out_in  (written for nn.Linear's layout)

import torch
import torch.nn.functional as F


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(x, weight, bias=None):
        return F.linear(x, weight, bias)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, bias = inputs
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        grad_x = torch.mm(grad_output, weight) if need_x else None
        grad_w = torch.einsum("no,ni->oi", grad_output, x) if need_w else None
        grad_b = grad_output.sum(0) if (ctx.has_bias and need_b) else None
        return grad_x, grad_w, grad_b


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone()


def fake_quantize(x, step):
    scaled = x / step
    # the same straight-through estimator, written as a detach trick
    return (scaled + (RoundSTE.apply(scaled.detach()) - scaled).detach()) * step
