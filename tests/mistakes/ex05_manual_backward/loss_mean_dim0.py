# Mistake: averages the column of squared errors over dim=0, which returns shape [1], not a scalar.
# Expect: should return a scalar tensor (shape [])

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # w and b have shape [1]: broadcasting scales every row of x [N, 1] and keeps the column (x @ w would not).
    return w * x + b


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred - y) ** 2).mean(dim=0)


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    # The chain rule, one step at a time: dL/dw = sum over samples of dL/dy_pred * dy_pred/dw, with
    # dy_pred/dw = x and dy_pred/db = 1. The error is y_pred - y, the sign the loss's derivative has.
    error = predict(x, w, b) - y  # dL/dy_pred = 2 * error / N
    # The 2 comes from the square; each sample's error meets its own x before the mean over the batch.
    dw = 2 * (error * x).mean()
    db = 2 * error.mean()
    return dw.reshape(w.shape), db.reshape(b.shape)  # one number each, shaped as w and b ([1])
