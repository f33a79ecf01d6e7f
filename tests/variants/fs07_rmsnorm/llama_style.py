"""A correct variant in LLaMA's style: normalize in float32, cast back with type_as, then scale in the input's
dtype; backward through the pieces of the chain rule, one at a time."""
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps=1e-6):
        xf = x.float() if x.element_size() < 4 else x
        inv_rms = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        normed = (xf * inv_rms).type_as(x)
        ctx.save_for_backward(normed, inv_rms, weight)
        return normed * weight

    @staticmethod
    def backward(ctx, grad_output):
        normed, inv_rms, weight = ctx.saved_tensors
        batch_dims = list(range(grad_output.dim() - 1))
        grad_weight = (grad_output * normed).sum(batch_dims) if batch_dims else grad_output * normed
        d_normed = grad_output * weight
        # normed = x * r with r = (mean(x^2) + eps)^(-1/2): d r / d x = -r^3 * x / D
        d = normed.shape[-1]
        dot = (d_normed * normed).sum(-1, keepdim=True)
        grad_x = inv_rms * (d_normed - normed * dot / d)
        return grad_x, grad_weight, None


def rms_norm(x, weight, eps=1e-6):
    return RMSNormFunction.apply(x, weight, eps)
