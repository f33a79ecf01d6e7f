# Mistake: forgets the 2 that the derivative of the square brings down.
# Expect: factor 2

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return w * x + b


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((y_pred - y) ** 2).mean()


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    error = predict(x, w, b) - y  # dL/dy_pred = 2 * error / N
    dw = (error * x).mean()
    db = error.mean()
    return dw.reshape(w.shape), db.reshape(b.shape)
