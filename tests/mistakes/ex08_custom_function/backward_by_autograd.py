# Mistake: backward has autograd differentiate the forward again (torch.autograd.grad) instead of deriving the gradients.
# Expect: backward calls `torch.autograd.grad`
# Variant: layout=out_in

import torch


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight, bias)
        out = x @ weight.t()
        if bias is not None:
            out = out + bias
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        inputs = [t.detach().requires_grad_(True) for t in (x, weight) + ((bias,) if bias is not None else ())]
        with torch.enable_grad():
            out = inputs[0] @ inputs[1].t() + (inputs[2] if bias is not None else 0)
            grads = torch.autograd.grad(out, inputs, grad_output)
        grads = [g if need else None for g, need in zip(grads, ctx.needs_input_grad)]
        return (*grads, None) if bias is None else tuple(grads)


def linear(x, weight, bias=None):
    return LinearFunction.apply(x, weight, bias)


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def fake_quantize(x: torch.Tensor, step: float) -> torch.Tensor:
    return RoundSTE.apply(x / step) * step
