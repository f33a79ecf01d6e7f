# Mistake: backward keeps the mean's term of grad_x but forgets the variance's.
# Expect: the variance's is missing
import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        dims = tuple(range(x.dim() - weight.dim(), x.dim()))  # the last weight.dim() dimensions
        w, b = weight, bias  # shaped like the normalized dimensions: they broadcast as they are
        mean = x.mean(dim=dims, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        x_hat = (x - mean) * rstd
        ctx.save_for_backward(x_hat, rstd, w)
        ctx.dims = dims
        return x_hat * w + b

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, rstd, w = ctx.saved_tensors
        dims = ctx.dims
        others = tuple(d for d in range(grad_output.dim()) if d not in dims)
        grad_weight = (grad_output * x_hat).sum(dim=others).reshape(w.shape)
        grad_bias = grad_output.sum(dim=others).reshape(w.shape)
        g = grad_output * w
        grad_x = rstd * (g - g.mean(dim=dims, keepdim=True))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return LayerNormFunction.apply(x, weight, bias, eps)
