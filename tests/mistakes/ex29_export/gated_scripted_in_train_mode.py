# Mistake: scripts the gated model as it arrives, in training mode: the scripted program keeps the mode, so its
# Dropout still drops inputs when it is loaded and run.
# Expect: its Dropout is still on
import torch


def export_mlp(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model, example, path):
    torch.jit.save(torch.jit.script(model), path)
