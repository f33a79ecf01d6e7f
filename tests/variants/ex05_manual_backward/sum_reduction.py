"""A correct variant for the sum draw of the kata: F.mse_loss(reduction="sum"), and both gradients at once in
matrix form (2 * A^T (A theta - y) with A = [x, 1]), computed in float64 and cast back."""
# Variant: reduction=sum

import torch
import torch.nn.functional as F


def predict(x, w, b):
    return torch.addcmul(b, x, w)


def mse_loss(y_pred, y):
    return F.mse_loss(y_pred, y, reduction="sum")


def linear_grads(x, y, w, b):
    a = torch.cat([x, torch.ones_like(x)], dim=1).double()
    theta = torch.cat([w, b]).double().unsqueeze(1)
    grad = 2.0 * a.T @ (a @ theta - y.double())
    dw, db = grad.to(w.dtype).unbind(0)
    return dw, db
