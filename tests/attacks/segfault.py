# Attack: linear_grads dereferences a null pointer (SIGSEGV).
import ctypes


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    ctypes.string_at(0)
