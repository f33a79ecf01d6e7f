# Attack: ex05 asks for gradients derived by hand; this gets them from autograd by a route the probe's patches do
# not see (ROUTE: the C++ engine, torch.autograd.grad bound as a default argument, torch.func, functional.jacobian).
import torch

ROUTE = "engine"


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def linear_grads(x, y, w, b, _grad=torch.autograd.grad):
    w, b = w.detach().requires_grad_(), b.detach().requires_grad_()
    loss = mse_loss(predict(x, w, b), y)
    if ROUTE == "engine":
        return torch.autograd.Variable._execution_engine.run_backward(
            (loss,), (torch.ones_like(loss),), False, False, (w, b), False, False)
    if ROUTE == "default argument":
        return tuple(_grad(loss, [w, b]))
    if ROUTE == "torch.func":
        return tuple(torch.func.grad(lambda w, b: mse_loss(predict(x, w, b), y), argnums=(0, 1))(w, b))
    return tuple(torch.autograd.functional.jacobian(lambda w, b: mse_loss(predict(x, w, b), y), (w, b)))
