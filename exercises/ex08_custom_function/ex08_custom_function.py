"""ex08 - A custom torch.autograd.Function: write forward AND backward yourself.

Part 1. LinearFunction computes out = x @ weight.T + bias, like nn.Linear, with a backward you write:
        forward keeps what backward needs with ctx.save_for_backward(...); backward receives grad_output
        (dL/d out) and returns one gradient per forward input: (grad_x, grad_weight, grad_bias), each with
        the shape of its input, or None for an input that needs no gradient (see ctx.needs_input_grad).
Part 2. round() has a zero gradient almost everywhere, so a loss through it cannot train anything.
        RoundSTE is a straight-through estimator: forward rounds, backward passes grad_output through
        unchanged. fake_quantize(x, step) uses it to round x to multiples of `step` inside a loss.

Run `grade ex08` to check your work (`python ex08_custom_function.py` runs torch's gradcheck).
"""

import torch


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        """x: [N, in], weight: [out, in], bias: [out] or None. Return x @ weight.T (+ bias), shape [N, out]."""
        # TODO: save the tensors backward will need with ctx.save_for_backward(...), then compute the output.
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output: [N, out]. Return (grad_x, grad_weight, grad_bias), shaped like x, weight and bias.

        Return None in place of a gradient whose input does not need one (ctx.needs_input_grad[i] is False),
        which is always the case for a bias that is None.
        """
        # TODO: get the saved tensors back with ctx.saved_tensors; apply the chain rule.
        raise NotImplementedError


def linear(x, weight, bias=None):
    """Use the Function like this (Functions are called through .apply, never instantiated)."""
    return LinearFunction.apply(x, weight, bias)


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        """Round every element to the nearest integer (like torch.round)."""
        # TODO
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        """Straight-through: pretend forward was the identity."""
        # TODO
        raise NotImplementedError


def fake_quantize(x: torch.Tensor, step: float) -> torch.Tensor:
    """Round x to the nearest multiple of `step` (a positive float), letting gradients reach x."""
    # TODO: use RoundSTE.apply
    raise NotImplementedError


if __name__ == "__main__":
    # gradcheck compares your backward with finite differences of your forward. Use float64 inputs:
    # in float32 the finite differences are too noisy and correct code fails.
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    print("gradcheck:", torch.autograd.gradcheck(LinearFunction.apply, (x, w, b)))
    v = torch.tensor([0.2, 0.9, -1.4], requires_grad=True)
    q = fake_quantize(v, 0.5)
    q.sum().backward()
    print("fake_quantize:", q, "grad:", v.grad)
