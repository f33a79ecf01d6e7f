# Mistake: writes the usual mean squared error, where this draw asks for the sum over the batch.
# Expect: a mean where a sum belongs
# Variant: reduction=sum

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return w * x + b


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred - y) ** 2).mean()


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    error = predict(x, w, b) - y
    dw = 2 * (error * x).sum()
    db = 2 * error.sum()
    return dw.reshape(w.shape), db.reshape(b.shape)
