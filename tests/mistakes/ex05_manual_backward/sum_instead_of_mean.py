# Mistake: sums over the batch instead of averaging (missing 1/N).
# Expect: a sum where a mean belongs
# Variant: reduction=mean

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return w * x + b


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred - y) ** 2).mean()


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    error = predict(x, w, b) - y  # dL/dy_pred = 2 * error / N
    dw = 2 * (error * x).sum()
    db = 2 * error.sum()
    return dw.reshape(w.shape), db.reshape(b.shape)
