"""fs06 - LayerNorm from scratch: forward, and backward by hand in a torch.autograd.Function.

LayerNorm normalizes over the last weight.dim() dimensions of x, as F.layer_norm(x, weight.shape, weight, bias, eps): per group, x_hat = (x - mean) / sqrt(var + eps), with the biased variance
(divided by the group's size, not size - 1), then y = x_hat * weight + bias.

LayerNormFunction.forward computes y and keeps what backward needs with ctx.save_for_backward(...);
LayerNormFunction.backward(ctx, grad_output) returns (grad_x, grad_weight, grad_bias, None): one value per
input of forward, None for the float eps. Derive them yourself: no F.layer_norm or nn.LayerNorm in forward, no
autograd (torch.autograd.grad, .backward()) in backward. Run `grade fs06` to check your work.
"""

import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        """x: [..., *normalized_shape]; weight and bias: normalized_shape (e.g. [D], or [H, W]). Returns y, shaped like x."""
        # TODO
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output: dL/dy, shaped like x. Returns (grad_x, grad_weight, grad_bias, None)."""
        # TODO
        raise NotImplementedError


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Use the Function like this (Functions are called through .apply, never instantiated)."""
    return LayerNormFunction.apply(x, weight, bias, eps)


if __name__ == "__main__":
    # gradcheck compares your backward with finite differences of your forward, in float64.
    x = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(5, dtype=torch.float64, requires_grad=True)
    print("gradcheck:", torch.autograd.gradcheck(layer_norm, (x, w, b)))
