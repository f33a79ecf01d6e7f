# Mistake: stores every output, then scans them in the order of named_modules(), which is not the order they run.
# Expect: in the order of named_modules()
import torch


def gradient_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters() if p.grad is not None}


def first_bad_layer(model, x, limit):
    outputs = {}
    handles = [m.register_forward_hook(lambda mod, inp, out, name=name: outputs.__setitem__(name, out))
               for name, m in model.named_modules() if name]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    for name, _ in model.named_modules():
        out = outputs.get(name)
        if out is not None and (not torch.isfinite(out).all() or out.abs().max() > limit):
            return name
    return None
