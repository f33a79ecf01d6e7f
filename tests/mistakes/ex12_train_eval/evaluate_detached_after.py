# Mistake: runs the forward with autograd on and detaches the output afterwards: the graph was built anyway.
# Expect: only its output was detached afterwards

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
    model.eval()
    try:
        return model(x).detach()  # no graph on the output
    finally:
        model.train(was_training)


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
