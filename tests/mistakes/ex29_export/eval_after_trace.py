# Mistake: switches to eval mode after tracing: the trace has already recorded the training-mode operations.
# Expect: Call model.eval() before tracing
import torch


def export_mlp(model, example, path):
    traced = torch.jit.trace(model, example)
    model.eval()
    traced.eval()
    torch.jit.save(traced, path)


def export_gated(model, example, path):
    model.eval()
    torch.jit.save(torch.jit.script(model), path)

