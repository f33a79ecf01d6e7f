"""A correct variant with other APIs: torch.autograd.grad, hooks instead of retain_grad, sub_ under no_grad,
detach for inference, and a weighted sum instead of backward(gradient=v)."""

import torch


def batch_loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


def features(x, w):
    return torch.tanh(x @ w)


def curve(x):
    return x ** 3 - 2 * x


def make_param(values, scale):
    return torch.tensor([v * scale for v in values], requires_grad=True)


def hidden_grad(x, w):
    h = x @ w
    seen = []
    h.register_hook(seen.append)  # a hook sees dloss/dh during backward
    (h ** 2).mean().backward()
    return w.grad, seen[0]


def accumulated_grad(w, batches):
    total = torch.zeros_like(w)
    for x, y in batches:
        (g,) = torch.autograd.grad(batch_loss(w, x, y), w)
        total += g
    return total


def per_batch_grads(w, batches):
    return [torch.autograd.grad(batch_loss(w, x, y), w)[0] for x, y in batches]


def two_losses_grads(x, w):
    h = features(x, w)
    torch.autograd.backward(h.mean(), retain_graph=True)  # backward, as the statement asks, by its other name
    grad_a = w.grad.detach().clone()
    w.grad = None
    torch.autograd.backward((h ** 2).mean())
    return grad_a, w.grad


def weighted_grad(x, v):
    (curve(x) * v).sum().backward()
    return x.grad


def sgd_step(w, x, y, lr):
    loss = batch_loss(w, x, y)
    loss.backward()
    with torch.no_grad():
        w.sub_(lr * w.grad)
    w.grad = None
    return float(loss)


def predict(w, x):
    return (x @ w).detach()
