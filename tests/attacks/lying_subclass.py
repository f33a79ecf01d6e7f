# Attack: returns a Tensor subclass whose __torch_function__ makes every comparison True.
import torch


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal, torch.Tensor.__eq__, torch.isclose):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def _liar(shape):
    return torch.zeros(shape).as_subclass(Liar)


def predict(x, w, b):
    return _liar(x.shape)


def mse_loss(y_pred, y):
    return _liar(())


def linear_grads(x, y, w, b):
    return _liar(1), _liar(1)
