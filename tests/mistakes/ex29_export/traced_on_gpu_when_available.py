# Mistake: moves the model (and the example) to the GPU whenever there is one before tracing: the
# caller's model leaves the CPU, and the program is bound to a GPU.
# Expect: sends tensors to it
import torch
from torch import nn


def export_mlp(model: nn.Module, example: torch.Tensor, path: str) -> None:
    model.eval()
    device = "cuda" if torch.cuda.is_available() else "cpu"  # "export for the GPU when there is one"
    model.to(device)
    torch.jit.save(torch.jit.trace(model, example.to(device)), path)


def export_gated(model: nn.Module, example: torch.Tensor, path: str) -> None:
    model.eval()
    torch.jit.save(torch.jit.script(model), path)
