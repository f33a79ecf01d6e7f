"""A correct variant in another style: nn.Parameter in float64, zero_() guarded against None,
add_ with alpha, inference_mode, torch.autograd.backward(y, grad_tensors=v), stacked results."""

import torch
from torch import nn


def batch_loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


def features(x, w):
    return torch.tanh(x @ w)


def curve(x):
    return x ** 3 - 2 * x


def make_param(values, scale):
    return nn.Parameter(torch.tensor(values, dtype=torch.float64) * scale)


def hidden_grad(x, w):
    h = torch.mv(x, w)
    h.retain_grad()
    loss = h.pow(2).mean()
    loss.backward()
    return w.grad.detach().clone(), h.grad.detach().clone()


def accumulated_grad(w, batches):
    w.grad = None
    for x, y in batches:
        loss = batch_loss(w, x, y)
        loss.backward()
    return w.grad.clone()


def per_batch_grads(w, batches):
    grads = []
    for x, y in batches:
        if w.grad is not None:
            w.grad.zero_()
        batch_loss(w, x, y).backward()
        grads.append(w.grad.detach().clone())
    return list(torch.stack(grads).unbind(0))  # views of one stacked tensor: still separate gradients


def two_losses_grads(x, w):
    h = features(x, w)
    loss_a, loss_b = h.mean(), (h ** 2).mean()
    loss_a.backward(retain_graph=True)
    grad_a = w.grad.clone()
    w.grad = None
    loss_b.backward()
    return grad_a, w.grad


def weighted_grad(x, v):
    y = curve(x)
    torch.autograd.backward(y, grad_tensors=v)
    return x.grad


def sgd_step(w, x, y, lr):
    loss = batch_loss(w, x, y)
    loss.backward()
    with torch.no_grad():
        w.add_(w.grad, alpha=-lr)
        w.grad.zero_()
    return loss.item()


def predict(w, x):
    with torch.inference_mode():
        return x @ w
