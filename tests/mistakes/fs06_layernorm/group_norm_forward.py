# Mistake: forward calls F.group_norm with one group, which computes the layer norm the statement forbids.
# Expect: torch's own `group_norm`
# Variant: layout=last
import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        dims = tuple(range(x.dim() - weight.dim(), x.dim()))
        w, b = weight, bias
        mean = x.mean(dim=dims, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        x_hat = (x - mean) * rstd
        n = weight.numel()  # one group over the normalised dims: a layer norm
        y = torch.nn.functional.group_norm(x.reshape(-1, n), 1, weight.reshape(-1), bias.reshape(-1), eps)
        y = y.reshape(x.shape)
        ctx.save_for_backward(x_hat, rstd, w)
        ctx.dims = dims
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, rstd, w = ctx.saved_tensors
        dims = ctx.dims
        others = tuple(d for d in range(grad_output.dim()) if d not in dims)
        grad_weight = (grad_output * x_hat).sum(dim=others).reshape(w.shape)
        grad_bias = grad_output.sum(dim=others).reshape(w.shape)
        g = grad_output * w
        grad_x = rstd * (g - g.mean(dim=dims, keepdim=True) - x_hat * (g * x_hat).mean(dim=dims, keepdim=True))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return LayerNormFunction.apply(x, weight, bias, eps)
