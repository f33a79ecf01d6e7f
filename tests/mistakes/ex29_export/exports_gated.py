# Mistake: uses torch.export for the gated model: it refuses an if on a tensor's values.
# Expect: torch.jit.script compiles the `if` itself
import torch


def export_mlp(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model, example, path):
    model.eval()
    torch.export.save(torch.export.export(model, (example,)), path)
