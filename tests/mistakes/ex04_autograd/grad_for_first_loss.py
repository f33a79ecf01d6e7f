# Mistake: takes the first loss's gradient with torch.autograd.grad and back-propagates the second only: the
# values are right, but the first loss is never back-propagated as the statement asks.
# Expect: not computed by backward
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
    loss_a, loss_b = h.mean(), (h ** 2).mean()
    grad_a = torch.autograd.grad(loss_a, w, retain_graph=True)[0]  # "no need to back-propagate the first"
    loss_b.backward()
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
    return loss.item()


def predict(w, x):
    with torch.no_grad():
        return x @ w
