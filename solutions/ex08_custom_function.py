"""Reference solution of ex08 (a custom autograd.Function for a linear layer; a straight-through round)."""

import torch


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        # save_for_backward, not ctx attributes: autograd checks that the tensors were not changed in place
        # before backward reads them, and frees them once it has.
        ctx.save_for_backward(x, weight, bias)
        out = x @ weight.t()
        if bias is not None:
            out = out + bias
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        # One gradient per forward input, in their order, each shaped as its input: the shapes decide which
        # matrix products to write. None where ctx.needs_input_grad says nobody asked for that gradient.
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight  # [N, out] @ [out, in] -> [N, in]
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t() @ x  # [out, N] @ [N, in] -> [out, in]
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(dim=0)  # bias was broadcast over the N rows: their gradients add up
        return grad_x, grad_weight, grad_bias


def linear(x, weight, bias=None):
    return LinearFunction.apply(x, weight, bias)


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)  # keeps x's float dtype: an integer tensor could carry no gradient

    @staticmethod
    def backward(ctx, grad_output):
        # Straight-through: backward acts as if forward were the identity. round's true gradient is 0 almost
        # everywhere, and would stop any training through it.
        return grad_output


def fake_quantize(x: torch.Tensor, step: float) -> torch.Tensor:
    # Count in steps, round to a whole number of them, scale back: a multiple of step, not the count.
    return RoundSTE.apply(x / step) * step
