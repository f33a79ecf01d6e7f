# Mistake: registers forward pre-hooks, which see a module's input: it names the module after the bad one.
# Expect: not a pre-hook
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    found = []

    def make_hook(name):
        def hook(module, inputs):
            t = inputs[0]
            if not found and (not torch.isfinite(t).all() or t.abs().max() > limit):
                found.append(name)
        return hook

    handles = [m.register_forward_pre_hook(make_hook(name)) for name, m in model.named_modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return found[0] if found else None
