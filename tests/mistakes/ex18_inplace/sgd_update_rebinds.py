# Mistake: `p = p - lr * p.grad` under no_grad only rebinds the loop variable; the parameters never change.
# Expect: computed its updated value into a new tensor

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p = p - lr * p.grad


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
