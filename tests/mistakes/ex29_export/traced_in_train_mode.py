# Mistake: traces the MLP as it arrives, in training mode: BatchNorm's batch statistics and Dropout are recorded.
# Expect: Call model.eval() before tracing
import torch


def export_mlp(model, example, path):
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.script(model), path)

