# Mistake: builds the programs but never saves them at path.
# Expect: wrote no file at path
import torch


def export_mlp(model, example, path):
    model.eval()
    return torch.jit.trace(model, example)


def export_gated(model, example, path):
    model.eval()
    return torch.jit.script(model)
