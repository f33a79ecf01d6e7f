# Mistake: never removes its hooks: they keep running at every later forward pass.
# Expect: hooks are still registered
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

    for name, m in model.named_modules():
        m.register_forward_hook(make_hook(name))
    with torch.no_grad():
        model(x)
    return found[0] if found else None
