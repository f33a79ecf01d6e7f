# Mistake: backward redoes the forward with autograd and asks torch.autograd.grad.
# Expect: calls `torch.autograd.grad`
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps=1e-6):
        xf = x.to(torch.promote_types(x.dtype, torch.float32))
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x, weight)
        ctx.eps = eps
        return (x_hat * weight).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        with torch.enable_grad():
            x, weight = (t.detach().requires_grad_(True) for t in (x, weight))
            y = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + ctx.eps) * weight
            grad_x, grad_weight = torch.autograd.grad(y, (x, weight), grad_output)
        return grad_x, grad_weight, None
        grad_weight = (grad_output * x_hat).sum(dim=tuple(range(grad_output.dim() - 1)))
        g = grad_output * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)
