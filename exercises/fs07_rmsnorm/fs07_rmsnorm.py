"""fs07 - RMSNorm from scratch: forward, and backward by hand in a torch.autograd.Function.

RMSNorm (LLaMA, Gemma, Mistral) normalizes each row of x, over the last dimension, by its root mean square:
x_hat = x / sqrt(mean(x ** 2) + eps), nothing subtracted, then y = x_hat * weight (as LLaMA and T5).
For float16 and bfloat16 inputs, compute in float32 (x ** 2 overflows float16 past 256) and return x's dtype.

RMSNormFunction.backward(ctx, grad_output) returns (grad_x, grad_weight, None), None for the float eps. Derive
them yourself: no F.rms_norm or nn.RMSNorm in forward, no autograd (torch.autograd.grad, .backward()) in
backward. Run `grade fs07` to check your work.
"""

import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps=1e-6):
        """x: [..., D] (float32, float64, float16 or bfloat16); weight: [D]. Returns y, shaped like x, in x's dtype."""
        # TODO
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output: dL/dy, shaped like x. Returns (grad_x, grad_weight, None)."""
        # TODO
        raise NotImplementedError


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Use the Function like this (Functions are called through .apply, never instantiated)."""
    return RMSNormFunction.apply(x, weight, eps)


if __name__ == "__main__":
    # gradcheck compares your backward with finite differences of your forward, in float64.
    x = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    print("gradcheck:", torch.autograd.gradcheck(rms_norm, (x, w)))
    print(rms_norm(torch.full((2, 4), 300.0, dtype=torch.float16), torch.ones(4, dtype=torch.float16)))
