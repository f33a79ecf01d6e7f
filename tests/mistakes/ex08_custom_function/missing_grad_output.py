# Mistake: returns the local derivative d out/d input only, forgetting to multiply by grad_output (chain rule).
# Expect: multiply by grad_output
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
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.ones_like(grad_output) @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = torch.ones_like(grad_output).t() @ x
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = torch.ones_like(grad_output).sum(dim=0)
        return grad_x, grad_weight, grad_bias


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
