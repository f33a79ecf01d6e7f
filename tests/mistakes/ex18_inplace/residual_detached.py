# Mistake: detaches the activation to make the in-place add legal, which cuts w out of the graph.
# Expect: no gradient reached w

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    h = torch.tanh(x @ w).detach()
    h += x
    return h
