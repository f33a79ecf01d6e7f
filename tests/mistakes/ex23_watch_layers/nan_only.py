# Mistake: looks for NaN only (torch.isnan, as in the tutorial's checklist): an inf goes unnoticed until it makes a
# NaN, and a finite explosion goes unnoticed too.
# Expect: holds -inf
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    found = []

    def make_hook(name):
        def hook(module, inputs, output):
            if not found and torch.isnan(output).any():
                found.append(name)
        return hook

    handles = [m.register_forward_hook(make_hook(name)) for name, m in model.named_modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return found[0] if found else None
