"""ex04 - Autograd: leaves, .grad, and the switches that control the graph.

Each function below is a small experiment with autograd. The inputs named w or x that "require grad"
arrive as leaf tensors with requires_grad=True; the others are plain data.
The three helpers at the top are given: use them, do not change them.
Run `grade ex04` to check your work.
"""

import torch


# -- given helpers (do not change) ------------------------------------------------------------

def batch_loss(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The mean squared error of the linear model x @ w against y. w: [D], x: [N, D], y: [N]."""
    return ((x @ w - y) ** 2).mean()


def features(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A shared forward pass, h = tanh(x @ w), shape [N]. Think of it as expensive: call it once."""
    return torch.tanh(x @ w)


def curve(x: torch.Tensor) -> torch.Tensor:
    """An elementwise function with a vector output: y = x ** 3 - 2 * x, same shape as x."""
    return x ** 3 - 2 * x


# -- your experiments ---------------------------------------------------------------------------

def make_param(values: list, scale: float) -> torch.Tensor:
    """values: a list of Python numbers (often ints). Return a 1-D float tensor holding values * scale
    that is a LEAF of the graph and requires grad, so that backward fills its .grad."""
    # TODO
    raise NotImplementedError


def hidden_grad(x: torch.Tensor, w: torch.Tensor):
    """x: [N, D] data; w: [D] requires grad. With h = x @ w and loss = (h ** 2).mean(), call
    loss.backward() once and return (w.grad, h.grad): dloss/dw, shape [D], and dloss/dh, shape [N]."""
    # TODO: h is not a leaf. What does it take for h.grad to be kept?
    raise NotImplementedError


def accumulated_grad(w: torch.Tensor, batches: list) -> torch.Tensor:
    """w: [D] requires grad; batches: a list of (x, y) pairs. Call backward on batch_loss(w, x, y) for
    each batch, WITHOUT clearing w.grad in between, and return w.grad: the sum of the batch gradients
    (this is gradient accumulation)."""
    # TODO
    raise NotImplementedError


def per_batch_grads(w: torch.Tensor, batches: list) -> list:
    """w: [D] requires grad; batches: a list of (x, y) pairs. Return a list with one gradient per batch:
    the gradient of batch_loss(w, x, y) of that batch alone, each found with backward."""
    # TODO: what is in w.grad when the next backward runs? And what does your list hold afterwards?
    raise NotImplementedError


def two_losses_grads(x: torch.Tensor, w: torch.Tensor):
    """x: [N, D] data; w: [D] requires grad. Call features(x, w) ONCE to get h, then let
    loss_a = h.mean() and loss_b = (h ** 2).mean(). Return (grad_a, grad_b): dloss_a/dw and dloss_b/dw,
    each on its own, both found with backward through the same graph."""
    # TODO: the first backward frees the graph unless you ask it not to.
    raise NotImplementedError


def weighted_grad(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """x: [N] requires grad; v: [N]. y = curve(x) has N entries, so backward needs a weight for each:
    return x.grad after backward of y with gradient v (the gradient of sum(v * y))."""
    # TODO
    raise NotImplementedError


def sgd_step(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, lr: float) -> float:
    """One step of gradient descent on batch_loss(w, x, y), applied to w itself: afterwards w is the same
    leaf tensor holding w - lr * gradient, and w.grad is cleared (zeros or None).
    Return the loss before the step as a Python float."""
    # TODO
    raise NotImplementedError


def predict(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """w: [D] requires grad; x: [N, D]. Return x @ w as a tensor outside any graph (requires_grad False),
    ready for .numpy() or plotting, without changing w."""
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    w = make_param([1, 2, 3], 0.5)
    print("make_param:", w, "leaf:", w.is_leaf)
    x, y = torch.randn(4, 3), torch.randn(4)
    print("hidden_grad:", hidden_grad(x, w.detach().clone().requires_grad_()))
    print("two_losses_grads:", two_losses_grads(x, w.detach().clone().requires_grad_()))
    print("predict:", predict(w, x))
