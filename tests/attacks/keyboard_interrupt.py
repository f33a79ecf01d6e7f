# Attack: raises KeyboardInterrupt and BaseException subclasses from inside the checks.
def predict(x, w, b):
    raise KeyboardInterrupt


def mse_loss(y_pred, y):
    raise SystemExit(0)


class Escape(BaseException):
    pass


def linear_grads(x, y, w, b):
    raise Escape("escape the test runner")
