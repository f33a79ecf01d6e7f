"""Reference solution of ex12 (inverted dropout, eval mode with restore, no_grad vs inference_mode)."""

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # self.training is what model.train() and model.eval() set, on this module and every other one.
        if not self.training or self.p == 0:
            return x
        # A fresh mask each call, drawn like x (its shape, its device): each element is kept with probability 1 - p.
        # Dividing by 1 - p keeps the expected value, so eval can return x unchanged; x itself is never modified.
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x * keep / (1 - self.p)


def evaluate(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = model.training
    # eval() switches every sub-module: Dropout off, BatchNorm on its running statistics, which it then
    # leaves unchanged. Setting model.training = False would switch the top module only.
    model.eval()
    try:
        with torch.inference_mode():  # no graph: the outputs are only looked at
            return model(x)
    finally:
        model.train(was_training)  # back to the mode it was in, even if the model raised


def extract_features(backbone: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = backbone.training
    backbone.eval()
    try:
        # no_grad, not inference_mode: inference tensors cannot be saved for a backward, so a head trained on
        # them would fail. no_grad gives ordinary tensors, just without a graph through the backbone.
        with torch.no_grad():
            return backbone(x)
    finally:
        backbone.train(was_training)
