# Mistake: detaches the sigmoid so that mul_ may change it, which hides the sigmoid from backward: the value is right, the gradient is not.
# Expect: hidden from autograd

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def swish(x):
    s = torch.sigmoid(x).detach()
    return s.mul_(x)


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
