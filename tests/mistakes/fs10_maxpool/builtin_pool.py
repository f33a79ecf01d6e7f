# Mistake: lets F.max_pool2d find the maxima and F.max_unpool2d send the gradient back.
# Expect: calls torch's own
import torch
import torch.nn.functional as F


class MaxPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        out, indices = F.max_pool2d(x, kernel_size, stride, padding, return_indices=True)
        ctx.save_for_backward(indices)
        ctx.settings = (kernel_size, stride, padding, x.shape[-2:])
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (indices,) = ctx.saved_tensors
        kernel_size, stride, padding, size = ctx.settings
        grad = F.max_unpool2d(grad_output, indices, kernel_size, stride, padding, output_size=size)
        return grad, None, None, None


def max_pool2d(x, kernel_size, stride=None, padding=0):
    return MaxPool2dFunction.apply(x, kernel_size, kernel_size if stride is None else stride, padding)
