# Mistake: "fixes" the backward error by adding through .data: no error any more, but the gradient is silently wrong.
# Expect: silently wrong

import torch


def sgd_update(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def swish(x):
    return x * torch.sigmoid(x)


def residual_tanh(x, w):
    h = torch.tanh(x @ w)
    h.data += x.data
    return h
