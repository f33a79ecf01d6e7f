# Attack: ex05 asks for gradients derived by hand; this gets them by a machine instead, by a route the probe may
# not see (ROUTE: the C++ engine, torch.autograd.grad bound as a default argument, torch.func, functional.jacobian,
# the engine run from a thread, its own saved-tensor hooks around the forward, .backward() in a forked child,
# forward-mode AD (dual numbers), hand-derived only when the grader's probe is watching, sympy's symbolic
# derivative, central finite differences).
import os
import pickle
import threading

import torch

ROUTE = "engine"


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def _by_autograd(x, y, w, b):
    w, b = w.detach().requires_grad_(), b.detach().requires_grad_()
    return tuple(torch.autograd.grad(mse_loss(predict(x, w, b), y), [w, b]))


def linear_grads(x, y, w, b, _grad=torch.autograd.grad):
    w0, b0 = w, b
    w, b = w.detach().requires_grad_(), b.detach().requires_grad_()
    if ROUTE == "engine":
        loss = mse_loss(predict(x, w, b), y)
        return torch.autograd.Variable._execution_engine.run_backward(
            (loss,), (torch.ones_like(loss),), False, False, (w, b), False, False)
    if ROUTE == "default argument":
        return tuple(_grad(mse_loss(predict(x, w, b), y), [w, b]))
    if ROUTE == "torch.func":
        return tuple(torch.func.grad(lambda w, b: mse_loss(predict(x, w, b), y), argnums=(0, 1))(w, b))
    if ROUTE == "jacobian":
        return tuple(torch.autograd.functional.jacobian(lambda w, b: mse_loss(predict(x, w, b), y), (w, b)))
    if ROUTE == "thread":
        found = []
        thread = threading.Thread(target=lambda: found.append(_by_autograd(x, y, w0, b0)))
        thread.start()
        thread.join()
        return found[0]
    if ROUTE == "own hooks":
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            loss = mse_loss(predict(x, w, b), y)
        return tuple(torch.autograd.grad(loss, [w, b]))
    if ROUTE == "fork":
        r, wr = os.pipe()
        if os.fork() == 0:
            os.write(wr, pickle.dumps([g.tolist() for g in _by_autograd(x, y, w0, b0)]))
            os._exit(0)
        os.close(wr)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.wait()
        return tuple(torch.tensor(g, dtype=w0.dtype) for g in pickle.loads(data))
    if ROUTE == "forward mode":
        import torch.autograd.forward_ad as fwAD
        grads = []
        for which in range(2):
            with fwAD.dual_level():
                tangent = [torch.zeros_like(w0), torch.zeros_like(b0)]
                tangent[which] = torch.ones_like(tangent[which])
                dual_w, dual_b = fwAD.make_dual(w0, tangent[0]), fwAD.make_dual(b0, tangent[1])
                grads.append(fwAD.unpack_dual(mse_loss(predict(x, dual_w, dual_b), y)).tangent.reshape(1))
        return tuple(grads)
    if ROUTE == "tell the probe apart":
        if torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:  # the grader's probe: be honest
            error = 2 * (predict(x, w0, b0) - y) / x.shape[0]
            return (error * x).sum().reshape(1), error.sum().reshape(1)
        return _by_autograd(x, y, w0, b0)
    if ROUTE == "sympy":
        import sympy
        sw, sb = sympy.symbols("w b")
        xs, ys = x.double().flatten().tolist(), y.double().flatten().tolist()
        loss = sum((sw * xi + sb - yi) ** 2 for xi, yi in zip(xs, ys)) / len(xs)
        values = {sw: float(w0), sb: float(b0)}
        return tuple(torch.tensor([float(sympy.diff(loss, s).subs(values))], dtype=w0.dtype) for s in (sw, sb))
    h = 1e-3 if ROUTE == "finite differences" else 0.0
    grads = []
    for which in range(2):
        step = [torch.zeros_like(w0), torch.zeros_like(b0)]
        step[which] = step[which] + h
        up = mse_loss(predict(x, w0.double() + step[0], b0.double() + step[1]), y.double())
        down = mse_loss(predict(x, w0.double() - step[0], b0.double() - step[1]), y.double())
        grads.append(((up - down) / (2 * h)).to(w0.dtype).reshape(1))
    return tuple(grads)
