# Mistake: lets autograd do the work through a name imported from torch.autograd.
# Expect: gradients from autograd

import torch
from torch.autograd import grad


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    w = w.detach().requires_grad_()
    b = b.detach().requires_grad_()
    dw, db = grad(mse_loss(predict(x, w, b), y), [w, b])
    return dw, db
