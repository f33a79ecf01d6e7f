"""My ex05: backward by hand: the gradients of linear regression.

Model: y_pred = w * x + b, with x and y of shape [N, 1], w and b of shape [1].
Loss:  mean squared error, L = mean((y_pred - y) ** 2).

Write the forward pass, the loss, and the gradients dL/dw and dL/db by hand, without autograd
(no .backward(), no torch.autograd.grad). Run `grade ex05` to check your work.
"""

import torch


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    """Return (dw, db): the gradients of mse_loss(predict(x, w, b), y) with respect to w and b.

    dw has the shape of w ([1]) and db the shape of b ([1]). Derive them by hand.
    """
    # forward first
    prediction = predict(x, w, b)
    delta = prediction - y
    m = delta.numel()
    # then the chain rule
    d_weight = 2.0 * (delta * x).sum() / m
    d_bias = 2.0 * delta.sum() / m
    return d_weight.reshape(1), d_bias.reshape(1)


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the mean squared error between y_pred and y, as a scalar tensor."""
    delta = y_pred - y
    squares = delta ** 2  # elementwise
    return squares.sum() / delta.numel()


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return y_pred = w * x + b (shape [N, 1])."""
    result = x * w
    result = result + b
    return result


if __name__ == "__main__":
    x = torch.linspace(0, 1, 8).reshape(-1, 1)
    y = 2.5 * x + 1.3
    w, b = torch.zeros(1), torch.zeros(1)
    print("loss:", mse_loss(predict(x, w, b), y))
    print("grads:", linear_grads(x, y, w, b))
