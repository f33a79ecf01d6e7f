# Mistake: backward's two correction terms averaged over the last dimension only: right for a [D] normalized_shape,
# wrong for [H, W]. Only the backward checks on a two-dimensional normalized_shape see it.
# Expect: d loss/d x is wrong
# Variant: layout=last

import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        dims = tuple(range(x.dim() - weight.dim(), x.dim()))  # the last weight.dim() dimensions
        w, b = weight, bias  # shaped like the normalized dimensions: they broadcast as they are
        mean = x.mean(dim=dims, keepdim=True)
        # The biased variance (divided by D, not D - 1), as LayerNorm defines it.
        var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
        # eps inside the square root: a constant row gives x_hat = 0, not 0 / 0.
        rstd = torch.rsqrt(var + eps)
        x_hat = (x - mean) * rstd
        ctx.save_for_backward(x_hat, rstd, w)
        ctx.dims = dims  # a tuple of ints: a plain attribute is fine for what is not a tensor
        return x_hat * w + b

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, rstd, w = ctx.saved_tensors
        dims = ctx.dims
        # weight and bias were broadcast over every other dimension: their gradients sum over those.
        others = tuple(d for d in range(grad_output.dim()) if d not in dims)
        grad_weight = (grad_output * x_hat).sum(dim=others).reshape(w.shape)
        grad_bias = grad_output.sum(dim=others).reshape(w.shape)
        # The mean and the variance depend on every x of the group: besides g * rstd, one term for each.
        g = grad_output * w
        grad_x = rstd * (g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return LayerNormFunction.apply(x, weight, bias, eps)
