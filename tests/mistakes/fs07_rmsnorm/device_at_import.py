# Mistake: the device is chosen once, at import, and eps is made there: "cuda" whenever a GPU is present.
# Expect: when your file is imported
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps=1e-6):
        xf = x.to(torch.promote_types(x.dtype, torch.float32))
        rstd = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + torch.tensor(eps, device=DEVICE))
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
