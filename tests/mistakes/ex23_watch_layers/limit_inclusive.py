# Mistake: compares with >= limit: an output that reaches the limit exactly, and no more, is reported as bad.
# Expect: (> limit, not >=)
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    found = []

    def make_hook(name):
        def hook(module, inputs, output):
            if not found and isinstance(output, torch.Tensor):
                if not torch.isfinite(output).all() or output.abs().max() >= limit:
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
