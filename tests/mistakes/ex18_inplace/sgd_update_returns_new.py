# Mistake: writes the update out of place and returns the new tensors; the parameters the model holds never change.
# Expect: returned a list

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        return [p - lr * p.grad for p in params]


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    return torch.tanh(x @ w) + x
