"""ex23 - Watching gradients and activations: which layer goes wrong?

Write two debugging tools: per-parameter gradient norms after a backward pass, and a forward-hook
monitor that names the first layer whose output is non-finite or explodes.
Run `grade ex23` to check your work.
"""

import torch
from torch import nn


def gradient_norms(model: nn.Module) -> dict:
    """After loss.backward(): {name: L2 norm of that parameter's gradient, as a Python float}, one entry per
    parameter of model.named_parameters() that has a gradient (leave out those whose .grad is None).
    Leave the gradients as they are."""
    # TODO: loop over model.named_parameters()
    raise NotImplementedError


def first_bad_layer(model: nn.Module, x: torch.Tensor, limit: float):
    """Run model(x) once, watching every submodule's output with forward hooks. Return the name (as
    model.named_modules() gives it) of the first module, in the order the modules run, whose output holds
    a NaN or an inf, or a value whose absolute value exceeds `limit`; None if every output is fine.
    A module may return a tuple instead of a tensor (nn.LSTM does): skip it, or look at the tensors inside.
    Remove every hook before returning; a monitor only looks, it changes no output."""
    # TODO: register_forward_hook on each submodule, run the model once, remove the hooks
    raise NotImplementedError


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    with torch.no_grad():
        model[2].weight.mul_(1e6)  # rig the second Linear to explode
    x = torch.randn(16, 4)
    model(x).pow(2).mean().backward()
    print(gradient_norms(model))
    print("first bad layer:", first_bad_layer(model, x, limit=1e3))  # expect '2'
