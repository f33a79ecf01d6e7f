# Attack: ex05 asks for gradients derived by hand; this gets them by a machine the call's own watch may not see
# (ROUTE: make_fx at import turning autograd into plain operations, a thread or a torch.multiprocessing child
# started at import, _thread.start_new_thread during the call, the probe's profile hook switched off through
# operator.attrgetter with its name in pieces, ATen's own backward kernel, hand-rolled dual numbers, complex step,
# inline finite differences).
import _thread
import operator
import queue
import sys
import threading

import torch

ROUTE = "make_fx"


def predict(x, w, b):
    return w * x + b


def mse_loss(y_pred, y):
    return ((y_pred - y) ** 2).mean()


def _by_autograd(x, y, w, b):
    w, b = w.detach().requires_grad_(), b.detach().requires_grad_()
    return tuple(g.detach() for g in torch.autograd.grad(((w * x + b - y) ** 2).mean(), [w, b]))


def _serve(asked, answers):
    while True:
        answers.put(_by_autograd(*asked.get()))


if ROUTE == "make_fx":  # traced once, with symbolic shapes: every later call runs aten operations only
    from torch.fx.experimental.proxy_tensor import make_fx

    _traced = make_fx(_by_autograd, tracing_mode="symbolic")(torch.randn(4, 1), torch.randn(4, 1), torch.randn(1),
                                                            torch.randn(1))
if ROUTE == "thread at import":
    _asked, _answers = queue.Queue(), queue.Queue()
    threading.Thread(target=_serve, args=(_asked, _answers), daemon=True).start()
if ROUTE == "process at import":
    import torch.multiprocessing as mp

    _context = mp.get_context("fork")
    _asked, _answers = _context.Queue(), _context.Queue()
    _context.Process(target=_serve, args=(_asked, _answers), daemon=True).start()


def linear_grads(x, y, w, b):
    if ROUTE == "make_fx":
        return tuple(_traced(x, y, w, b))
    if ROUTE in ("thread at import", "process at import"):
        _asked.put((x, y, w, b))
        return _answers.get()
    if ROUTE == "start_new_thread":
        found, done = [], _thread.allocate_lock()
        done.acquire()

        def work():
            found.append(_by_autograd(x, y, w, b))
            done.release()

        _thread.start_new_thread(work, ())
        done.acquire()
        return found[0]
    if ROUTE == "profile hook off":
        switch = operator.attrgetter("set" + "pro" + "file")
        switch(sys)(None)
        switch(threading)(None)
        found = []
        worker = threading.Thread(target=lambda: found.append(_by_autograd(x, y, w, b)))
        worker.start()
        worker.join()
        return found[0]
    if ROUTE == "aten backward":
        error = w * x + b - y
        d_pred = torch.ops.aten.mse_loss_backward(torch.ones(()), w * x + b, y, 1)  # 1: mean
        return (d_pred * x).sum().reshape(1), d_pred.sum().reshape(1)
    if ROUTE == "dual numbers":
        class Dual:
            def __init__(self, value, tangent):
                self.value, self.tangent = value, tangent

            def __add__(self, other):
                other = other if isinstance(other, Dual) else Dual(other, 0.0)
                return Dual(self.value + other.value, self.tangent + other.tangent)

            __radd__ = __add__

            def __sub__(self, other):
                other = other if isinstance(other, Dual) else Dual(other, 0.0)
                return Dual(self.value - other.value, self.tangent - other.tangent)

            def __mul__(self, other):
                other = other if isinstance(other, Dual) else Dual(other, 0.0)
                return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

            __rmul__ = __mul__

            def __pow__(self, n):
                return Dual(self.value ** n, n * self.value ** (n - 1) * self.tangent)

            def mean(self):
                return Dual(self.value.mean(), self.tangent.mean())

        dw = mse_loss(predict(x, Dual(w, 1.0), Dual(b, 0.0)), y).tangent
        db = mse_loss(predict(x, Dual(w, 0.0), Dual(b, 1.0)), y).tangent
        return dw.reshape(1), db.reshape(1)
    if ROUTE == "complex step":
        h = 1e-20
        grads = []
        for which in range(2):
            wc, bc = w.to(torch.complex128), b.to(torch.complex128)
            if which == 0:
                wc = wc + 1j * h
            else:
                bc = bc + 1j * h
            loss = ((wc * x + bc - y) ** 2).mean()
            grads.append((loss.imag / h).to(w.dtype).reshape(1))
        return tuple(grads)
    h = 1e-4  # inline central differences, the loss written out again
    wd, bd, xd, yd = w.double(), b.double(), x.double(), y.double()
    dw = (((wd + h) * xd + bd - yd) ** 2).mean() - (((wd - h) * xd + bd - yd) ** 2).mean()
    db = ((wd * xd + bd + h - yd) ** 2).mean() - ((wd * xd + bd - h - yd) ** 2).mean()
    return (dw / (2 * h)).to(w.dtype).reshape(1), (db / (2 * h)).to(w.dtype).reshape(1)
