"""Reference solution of ex29: eval mode first; trace the straight-line model, script the one with a branch."""

import torch
from torch import nn


def export_mlp(model: nn.Module, example: torch.Tensor, path: str) -> None:
    model.eval()
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model: nn.Module, example: torch.Tensor, path: str) -> None:
    model.eval()
    torch.jit.save(torch.jit.script(model), path)
