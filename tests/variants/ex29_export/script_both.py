# torch.jit.script for both models, frozen with torch.jit.freeze (inference-only constants).
import torch
from torch import nn


def _save(model: nn.Module, path: str) -> None:
    model.train(False)
    torch.jit.save(torch.jit.freeze(torch.jit.script(model)), path)


def export_mlp(model, example, path):
    _save(model, path)


def export_gated(model, example, path):
    _save(model, path)
