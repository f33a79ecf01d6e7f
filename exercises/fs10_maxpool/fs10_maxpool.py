"""fs10 - Max pooling from scratch: -inf padding, and the gradient to the argmax.

Max pooling keeps the largest value of each window of x. Its gradient is as simple and as easy to get wrong: all of
a window's gradient goes to the one cell that won the window (the first maximum, row by row, when several tie), and
a cell that won several overlapping windows collects all their gradients.

Write the forward and the backward yourself in MaxPool2dFunction, then max_pool2d on top of it. Do not use
F.max_pool2d, nn.MaxPool2d or F.max_unpool2d. Run `grade fs10` to check your work.
"""

import torch
import torch.nn.functional as F


class MaxPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        """x: [N, C, H, W]; the settings as max_pool2d gets them (stride is not None here).

        Return [N, C, H_out, W_out], the max of each window of x padded with -inf, and save for backward where each
        window's maximum lies.
        """
        # TODO
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output):
        """grad_output: [N, C, H_out, W_out]. Return (grad_x, None, None, None): grad_x shaped like x, each
        window's gradient at its maximum (added up where windows share one); None for each setting."""
        # TODO
        raise NotImplementedError


def max_pool2d(x: torch.Tensor, kernel_size, stride=None, padding=0) -> torch.Tensor:
    """F.max_pool2d(x, kernel_size, stride, padding) with ceil_mode=False, through MaxPool2dFunction.

    kernel_size, stride, padding: an int, or a pair (height, width); stride=None means kernel_size.
    The window covers kernel_size cells next to each other. padding adds -inf on each side (at most half the window).
    H_out = (H + 2 * padding[0] - (kH - 1) - 1) // stride[0] + 1, and W_out alike.
    """
    # TODO: return MaxPool2dFunction.apply(...)
    raise NotImplementedError


if __name__ == "__main__":
    x = torch.tensor([[[[1.0, 3.0, 2.0], [3.0, -1.0, 0.0], [-2.0, 4.0, 4.0]]]], requires_grad=True)
    out = max_pool2d(x, 2, stride=1)
    out.sum().backward()
    print(out)  # [[3, 3], [4, 4]]
    print(x.grad)  # [[0, 2, 0], [0, 0, 0], [0, 2, 0]]: the first 3 and the first 4 each win two windows
