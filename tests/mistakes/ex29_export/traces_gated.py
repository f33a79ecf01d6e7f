# Mistake: traces the gated model too (the tutorial's habit): the if becomes the example's branch, silently.
# Expect: the `if` is gone and its branch frozen
import torch


def export_mlp(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.trace(model, example), path)
