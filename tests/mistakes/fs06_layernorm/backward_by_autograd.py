# Mistake: backward recomputes the forward with autograd on and asks torch.autograd.grad for the gradients.
# Expect: calls `torch.autograd.grad`
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
        ctx.save_for_backward(x, weight, bias)
        ctx.eps = eps
        ctx.dims = dims
        return x_hat * w + b

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, bias = ctx.saved_tensors
        dims = ctx.dims
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_(True) for t in (x, weight, bias)]
            x, weight, bias = leaves
            w, b = weight, bias  # shaped like the normalized dimensions: they broadcast as they are
            mean = x.mean(dim=dims, keepdim=True)
            y = (x - mean) * torch.rsqrt(((x - mean) ** 2).mean(dim=dims, keepdim=True) + ctx.eps) * w + b
            grads = torch.autograd.grad(y, leaves, grad_output)
        return (*grads, None)
        others = tuple(d for d in range(grad_output.dim()) if d not in dims)
        grad_weight = (grad_output * x_hat).sum(dim=others).reshape(w.shape)
        grad_bias = grad_output.sum(dim=others).reshape(w.shape)
        g = grad_output * w
        grad_x = rstd * (g - g.mean(dim=dims, keepdim=True) - x_hat * (g * x_hat).mean(dim=dims, keepdim=True))
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return LayerNormFunction.apply(x, weight, bias, eps)
