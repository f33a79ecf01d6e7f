"""A correct variant: addmm in forward (bias or not), mm in backward, bias flag saved on ctx, a rounding
written as floor(x + 0.5), and a fake_quantize whose straight-through gradient is a detach trick
(no RoundSTE at all: the effect is what the statement asks for)."""
# Variant: layout=out_in  (written for nn.Linear's layout)

import torch


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        if bias is None:
            return x.mm(weight.t())
        return torch.addmm(bias, x, weight.t())

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output.mm(weight) if ctx.needs_input_grad[0] else None
        grad_weight = grad_output.t().mm(x) if ctx.needs_input_grad[1] else None
        grad_bias = grad_output.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_weight, grad_bias


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.floor(x + 0.5)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def fake_quantize(x, step):
    rounded = RoundSTE.apply(x / step).detach() * step  # RoundSTE for the values, a detach trick for the gradient
    return x + (rounded - x).detach()
