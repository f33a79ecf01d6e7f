"""fs13 - Adam and AdamW by hand, step for step as torch.optim.

Adam moves each parameter along a moving average of its gradient (m), divided by the square root of a moving
average of the gradient's square (v): each parameter gets a step size of its own. The details decide whether you
match torch.optim: the bias correction of the first steps, where eps goes, a step count per parameter, and how the
weight decay enters (Adam: coupled, added to the gradient; AdamW: decoupled, shrinking the parameter).

Do not use torch.optim. Run `grade fs13` to check your work.
"""

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        """params: the tensors to optimise (for instance model.parameters()). Keep, per parameter, a step count
        and the moving averages m and v (zeros at the start, in the parameter's dtype)."""
        # TODO
        raise NotImplementedError

    def zero_grad(self):
        """Set every parameter's .grad to None, as torch.optim does by default."""
        # TODO
        raise NotImplementedError

    def step(self):
        """One step for every parameter whose .grad is not None (the others are skipped, state and all):
        weight decay coupled (g = p.grad + weight_decay * p), then m and v updated, bias-corrected, and
        p -= lr * m_hat / (sqrt(v_hat) + eps), v_hat = v / (1 - beta2^t). No autograd graph: run it under torch.no_grad()."""
        # TODO
        raise NotImplementedError


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        """As Adam, but the weight decay is decoupled: p *= 1 - lr * weight_decay before the update, and the
        moments see the gradient alone. Note the default weight_decay, 1e-2."""
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = Adam([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    print(w)  # each entry moved by about lr per step towards 0: tensor([0.7..., -1.7...])
