# Mistake: assumes every module returns a tensor: torch.isfinite fails on a module that returns a tuple.
# Expect: returns a tuple (as nn.LSTM
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    found = []

    def make_hook(name):
        def hook(module, inputs, output):
            if not found and (not torch.isfinite(output).all() or output.abs().max() > limit):
                found.append(name)
        return hook

    handles = [m.register_forward_hook(make_hook(name)) for name, m in model.named_modules()]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None
