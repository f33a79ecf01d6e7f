# Mistake: takes the mean of the error and the mean of x apart (mean(e) * mean(x) is not mean(e * x)).
# Expect: a product of two means
# Variant: reduction=mean

import torch


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    error = predict(x, w, b) - y
    dw = 2 * error.mean() * x.mean()
    db = 2 * error.mean()
    return dw.reshape(1), db.reshape(1)
