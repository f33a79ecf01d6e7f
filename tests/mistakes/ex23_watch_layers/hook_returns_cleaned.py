# Mistake: the hook returns a cleaned output (nan_to_num), which replaces what the module computed.
# Expect: a hook that returns a value

import torch
from torch import nn


def gradient_norms(model: nn.Module) -> dict:
    # .norm() is the L2 norm of the gradient, read without changing it; a frozen or unused parameter has no
    # .grad (None) and is left out.
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model: nn.Module, x: torch.Tensor, limit: float):
    found = []

    def make_hook(name):
        # A forward hook runs when its module's forward returns, so it sees the output, and the layers report
        # in the order they ran; a container's hook runs after the layers inside it.
        def hook(module, inputs, output):
            if not found and isinstance(output, torch.Tensor):  # a tuple output (nn.LSTM) is skipped
                # isfinite catches NaN and inf alike; the limit is strict: a value exactly at it is fine.
                if not torch.isfinite(output).all() or output.abs().max() > limit:
                    found.append(name)
            if isinstance(output, torch.Tensor):
                return torch.nan_to_num(output)  # keep the rest of the forward clean
        return hook

    handles = [m.register_forward_hook(make_hook(name)) for name, m in model.named_modules()]
    try:
        with torch.no_grad():
            model(x)
    finally:
        # Remove the hooks even if the model raised: left behind, they would run on every later call.
        for h in handles:
            h.remove()
    return found[0] if found else None
