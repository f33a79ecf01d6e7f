# Attack: prints megabytes of output at import, then answers wrongly.
import torch

for i in range(200_000):
    print("flood line", i)


def predict(x, w, b):
    return w * x


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    return torch.zeros(1), torch.zeros(1)
