"""Reference solution of ex29: eval mode first; trace the straight-line model, script the one with a branch."""

import torch
from torch import nn


def export_mlp(model: nn.Module, example: torch.Tensor, path: str) -> None:
    # Before tracing: the program records BatchNorm and Dropout in the mode they run in while it is made,
    # and a later model.eval() does not change a program already traced.
    model.eval()
    # Tracing runs the model once on the example and records the operations: exact for a model without a
    # branch. torch.jit.save writes a program, not a pickle of the Python class.
    torch.jit.save(torch.jit.trace(model, example), path)


def export_gated(model: nn.Module, example: torch.Tensor, path: str) -> None:
    model.eval()
    # An `if` on tensor values: tracing would record the branch the example took, and torch.export refuses a
    # branch on data. Scripting compiles the source, so both branches stay in the program.
    torch.jit.save(torch.jit.script(model), path)
