# Mistake: divides the sum of squared errors by N - 1, as for an unbiased variance.
# Expect: divides the sum of squared errors by N - 1
# Variant: reduction=mean

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return w * x + b


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred - y) ** 2).sum() / (y.numel() - 1)


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    error = predict(x, w, b) - y  # dL/dy_pred = 2 * error / N
    dw = 2 * (error * x).mean()
    db = 2 * error.mean()
    return dw.reshape(w.shape), db.reshape(b.shape)
