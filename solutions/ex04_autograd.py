"""Reference solution of ex04 (leaves, retain_grad, accumulation, retain_graph, gradient=v, no_grad)."""

import torch


def batch_loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


def features(x, w):
    return torch.tanh(x @ w)


def curve(x):
    return x ** 3 - 2 * x


def make_param(values, scale):
    # Compute first, then switch requires_grad on: the result of `* scale` becomes the leaf. A tensor that
    # required grad before the multiplication would make the product a node of the graph, whose .grad stays None.
    return (torch.tensor(values, dtype=torch.float32) * scale).requires_grad_()


def hidden_grad(x, w):
    h = x @ w
    # Autograd keeps .grad only for leaves; retain_grad() asks it to keep h's too, before backward runs.
    h.retain_grad()
    loss = (h ** 2).mean()
    loss.backward()
    return w.grad, h.grad


def accumulated_grad(w, batches):
    # backward() adds into w.grad, so not clearing it between batches is what sums their gradients.
    for x, y in batches:
        batch_loss(w, x, y).backward()
    return w.grad


def per_batch_grads(w, batches):
    grads = []
    for x, y in batches:
        w.grad = None  # otherwise this batch's gradient is added to the previous ones
        batch_loss(w, x, y).backward()
        # A copy: w.grad is one tensor that the next backward writes into, so the list would hold it N times.
        grads.append(w.grad.clone())
    return grads


def two_losses_grads(x, w):
    h = features(x, w)  # one forward pass, two backward passes through it
    # retain_graph=True keeps the graph's saved tensors for the second backward, which would fail without it.
    h.mean().backward(retain_graph=True)
    # Copy the first gradient and clear w.grad, or the second backward adds its gradient to it.
    grad_a = w.grad.clone()
    w.grad.zero_()
    (h ** 2).mean().backward()
    return grad_a, w.grad


def weighted_grad(x, v):
    # backward of a non-scalar needs one weight per output: gradient=v gives the gradient of sum(v * y).
    curve(x).backward(gradient=v)
    return x.grad


def sgd_step(w, x, y, lr):
    loss = batch_loss(w, x, y)
    loss.backward()
    # The update is not part of the model: under no_grad autograd does not record it, and an in-place -= keeps
    # w the same leaf tensor, so the caller's w moves (w = w - ... would only rebind a local name).
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()  # the next step starts from a clean gradient
    return loss.item()  # the loss before the step, as a Python float


def predict(w, x):
    # Under no_grad the result is outside any graph; w itself keeps requires_grad for training.
    with torch.no_grad():
        return x @ w
