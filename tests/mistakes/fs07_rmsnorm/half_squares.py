# Mistake: squares in the input's dtype: in float16 a row near 300 overflows (300 ** 2 > 65504).
# Expect: beyond float16's largest value
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps=1e-6):
        xf = x
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
        x_hat = xf * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return (x_hat * weight).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x_hat, rstd, weight = ctx.saved_tensors
        grad_weight = (grad_output * x_hat).sum(dim=tuple(range(grad_output.dim() - 1)))
        g = grad_output * weight
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)
