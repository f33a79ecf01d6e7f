# torch.export for the MLP (under no_grad, eval mode), torch.jit.script for the gated model, saved with .save().
import torch


def export_mlp(model, example, path):
    model = model.eval()
    with torch.no_grad():
        program = torch.export.export(model, (example,))
    torch.export.save(program, path)


def export_gated(model, example, path):
    scripted = torch.jit.script(model.eval())
    scripted.save(path)
