# torch.linalg.vector_norm, a dict of outputs in the order hooks fire, hooks with kwargs; looks inside tuple outputs.
import torch
from torch import nn


def gradient_norms(model: nn.Module) -> dict:
    norms = dict()
    for name, param in model.named_parameters():
        if param.grad is not None:
            norms[name] = torch.linalg.vector_norm(param.grad).item()
    return norms


def first_bad_layer(model, x, limit):
    order = {}
    handles = []
    for name, module in model.named_modules():
        def hook(mod, args, kwargs, output, name=name):
            parts = output if isinstance(output, tuple) else (output,)  # a tuple's tensors are looked at one by one
            order.setdefault(name, any(bool((~torch.isfinite(t)).any() or t.abs().amax() > limit)
                                       for t in parts if isinstance(t, torch.Tensor)))
        handles.append(module.register_forward_hook(hook, with_kwargs=True))
    with torch.inference_mode():
        model(x)
    for h in handles:
        h.remove()
    bad = [name for name, is_bad in order.items() if is_bad]
    return bad[0] if bad else None
