# Mistake: returns the loss computed again after the update, not the loss of the step's forward.
# Expect: the loss of the updated w

import torch


def batch_loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


def features(x, w):
    return torch.tanh(x @ w)


def curve(x):
    return x ** 3 - 2 * x


def make_param(values, scale):
    return (torch.tensor(values, dtype=torch.float32) * scale).requires_grad_()


def hidden_grad(x, w):
    h = x @ w
    h.retain_grad()
    loss = (h ** 2).mean()
    loss.backward()
    return w.grad, h.grad


def accumulated_grad(w, batches):
    for x, y in batches:
        batch_loss(w, x, y).backward()
    return w.grad


def per_batch_grads(w, batches):
    grads = []
    for x, y in batches:
        w.grad = None
        batch_loss(w, x, y).backward()
        grads.append(w.grad.clone())
    return grads


def two_losses_grads(x, w):
    h = features(x, w)
    h.mean().backward(retain_graph=True)
    grad_a = w.grad.clone()
    w.grad.zero_()
    (h ** 2).mean().backward()
    return grad_a, w.grad


def weighted_grad(x, v):
    curve(x).backward(gradient=v)
    return x.grad


def sgd_step(w, x, y, lr):
    loss = batch_loss(w, x, y)
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
    return batch_loss(w, x, y).item()


def predict(w, x):
    with torch.no_grad():
        return x @ w
