"""A correct variant: F.mse_loss, torch.addcmul, and both gradients at once in matrix form
(2/N * A^T (A theta - y) with A = [x, 1]), computed in float64 and cast back."""
# Variant: reduction=mean  (written for the mean; sum_reduction.py is the sum's)

import torch
import torch.nn.functional as F


def predict(x, w, b):
    return torch.addcmul(b, x, w)


def mse_loss(y_pred, y):
    return F.mse_loss(y_pred, y)


def linear_grads(x, y, w, b):
    a = torch.cat([x, torch.ones_like(x)], dim=1).double()
    theta = torch.cat([w, b]).double().unsqueeze(1)
    grad = 2.0 / len(x) * a.T @ (a @ theta - y.double())
    dw, db = grad.to(w.dtype).unbind(0)
    return dw, db
