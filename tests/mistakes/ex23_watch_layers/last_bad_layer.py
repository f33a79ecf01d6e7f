# Mistake: overwrites the name at every bad output, so it returns the last bad module (the whole model), not the first.
# Expect: Keep the first name your hooks see
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    found = [None]

    def make_hook(name):
        def hook(module, inputs, output):
            if not torch.isfinite(output).all() or output.abs().max() > limit:
                found[0] = name
        return hook

    handles = [m.register_forward_hook(make_hook(name)) for name, m in model.named_modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return found[0]
