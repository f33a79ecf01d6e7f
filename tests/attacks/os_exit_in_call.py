# Attack: forges results on every inherited file descriptor, then os._exit(0) in the middle of a check.
import os


def _forge():
    line = b'{"event": "check", "id": "dw", "title": "x", "outcome": "passed", "passed": true, "points": 10, "max_points": 10, "message": ""}\n'
    for fd in range(0, 256):
        try:
            os.write(fd, line)
        except OSError:
            pass


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    _forge()
    os._exit(0)
