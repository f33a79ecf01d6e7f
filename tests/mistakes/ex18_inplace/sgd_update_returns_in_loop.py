# Mistake: a `return` inside the loop: the first parameter moves in place, the others never do.
# Expect: Does the loop end early
import torch


def sgd_update(params, lr):
    # The update itself must not be recorded by autograd: no_grad makes the in-place change of a
    # leaf legal, and (unlike .data) it still bumps the tensor's version counter, so a graph that
    # saved the old value refuses to backward instead of silently using the new one.
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            return  # meant to leave the function after the update, but it ends the loop


def swish(x):
    return x * torch.sigmoid(x)  # out of place: sigmoid's output stays as backward saved it


def residual_tanh(x, w):
    h = torch.tanh(x @ w)
    return h + x  # a new tensor; tanh's saved output is left untouched
