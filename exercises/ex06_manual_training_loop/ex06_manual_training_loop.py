"""ex06 - A training loop by hand: fit y = w * x + b with no optimizer.

Data: x and y of shape [N, 1], y close to 2.5 * x + 1.3 (plus noise), x spread like torch.randn(N, 1) * 5.
Model: y_pred = w * x + b, with w and b leaf tensors of shape [1] that require grad.
Loss:  mean squared error, L = mean((y_pred - y) ** 2).

Write one step of gradient descent (forward, loss, backward, update, zero the gradients), then the loop
that repeats it. No torch.optim here: you do what an optimizer does. Run `grade ex06` to check your work.
"""

import torch

LR = None  # TODO: choose a learning rate for train() (too large diverges, too small is too slow)


def train_step(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor, lr: float) -> float:
    """One gradient-descent step on the MSE of y_pred = w * x + b.

    w and b are leaf tensors of shape [1] with requires_grad=True: change them in place, so that the
    caller's w and b move. Return the loss of this step (computed before the update) as a Python float.
    """
    # TODO 1. forward: y_pred and the loss
    # TODO 2. backward: fills w.grad and b.grad
    # TODO 3. update w and b in place, without autograd recording the update
    # TODO 4. zero the gradients, so the next step starts from zero
    raise NotImplementedError


def train(x: torch.Tensor, y: torch.Tensor, epochs: int):
    """Fit w and b to (x, y): return (w, b, losses).

    Start from w = b = 0 (tensors of shape [1] that require grad), run `epochs` steps of train_step
    with your learning rate LR, and collect the loss of every step in the list `losses`.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(100, 1) * 5
    y = 2.5 * x + 1.3 + 0.5 * torch.randn(100, 1)
    w, b, losses = train(x, y, epochs=300)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, w = {w.item():.4f}, b = {b.item():.4f}")
