"""ex18 - In-place operations and autograd: fix the three bugs.

Each function below runs, but breaks autograd with an in-place operation (a method whose name
ends in `_`, or `+=`, `-=`, `*=`...). Call them on tensors that require grad and then call
`.backward()` to see the errors:

    RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.
    RuntimeError: one of the variables needed for gradient computation has been modified by an
                  inplace operation

Fix each one so that values AND gradients are right. Run `grade ex18` to check your work.
"""

import torch


def sgd_update(params, lr):
    """One step of gradient descent, in place: each p becomes p - lr * p.grad.

    params: a list of leaf tensors with requires_grad=True whose .grad is filled (after backward).
    The same tensor objects must be updated (the model holds them), and they must stay
    trainable leaves. Returns None.
    """
    for p in params:
        p -= lr * p.grad  # TODO fix: autograd refuses this. Why, and what is the right way?


def swish(x):
    """Return swish(x) = x * sigmoid(x), elementwise, same shape as x. Do not change x."""
    s = torch.sigmoid(x)
    return s.mul_(x)  # TODO fix: the forward value is right, but backward fails. Why?


def residual_tanh(x, w):
    """Return tanh(x @ w) + x, a residual block (x: [N, D], w: [D, D]; result [N, D])."""
    h = torch.tanh(x @ w)
    h += x  # TODO fix: same story as swish.
    return h


if __name__ == "__main__":
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(4, 3, requires_grad=True)
    residual_tanh(x, w).sum().backward()
    print("residual_tanh: backward ok")
    swish(x).sum().backward()
    print("swish: backward ok")
    sgd_update([w], lr=0.1)
    print("sgd_update: ok")
