"""ex05 - Backward by hand: the gradients of linear regression.

Model: y_pred = w * x + b, with x and y of shape [N, 1], w and b of shape [1].
Loss:  mean squared error, L = mean((y_pred - y) ** 2).

Write the forward pass, the loss, and the gradients dL/dw and dL/db by hand, without autograd
(no .backward(), no torch.autograd.grad). Run `grade ex05` to check your work.
"""

import torch


def predict(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return y_pred = w * x + b (shape [N, 1])."""
    return b + w * x


def mse_loss(y_pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the mean squared error between y_pred and y, as a scalar tensor."""
    return torch.square(y_pred - y).mean()


def linear_grads(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor):
    """Return (dw, db): the gradients of mse_loss(predict(x, w, b), y) with respect to w and b.

    dw has the shape of w ([1]) and db the shape of b ([1]). Derive them by hand.
    """
    r = b + w * x - y
    return (2 * torch.mean(r * x)).reshape(1), (2 * torch.mean(r)).reshape(1)


if __name__ == "__main__":
    x = torch.linspace(0, 1, 8).reshape(-1, 1)
    y = 2.5 * x + 1.3
    w, b = torch.zeros(1), torch.zeros(1)
    print("loss:", mse_loss(predict(x, w, b), y))
    print("grads:", linear_grads(x, y, w, b))
