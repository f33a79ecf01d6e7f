# Mistake: lets autograd do the work the exercise asks to derive by hand.
# Expect: gradients from autograd
"""Gets the right numbers through autograd instead of deriving them."""

import torch


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    w = w.clone().requires_grad_(True)
    b = b.clone().requires_grad_(True)
    mse_loss(predict(x, w, b), y).backward()
    return w.grad, b.grad
