# Mistake: estimates the gradients by central finite differences of its own mse_loss instead of deriving them:
# the values are right, but no derivation was done.
# Expect: finite differences
def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b):
    h = 1e-3
    dw = (mse_loss(predict(x, w + h, b), y) - mse_loss(predict(x, w - h, b), y)) / (2 * h)
    db = (mse_loss(predict(x, w, b + h), y) - mse_loss(predict(x, w, b - h), y)) / (2 * h)
    return dw.reshape(1), db.reshape(1)
