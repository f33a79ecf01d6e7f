"""A correct variant: the mask from empty_like(x).bernoulli_, F-free arithmetic with mul and div, evaluate on a
deep copy of the model switched with train(False) (the original is never touched), and extract_features
with torch.set_grad_enabled(False) and the mode restored in a finally block."""

import copy

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        keep = torch.empty_like(x).bernoulli_(1 - self.p)
        return x.mul(keep).div(1 - self.p)


def evaluate(model, x):
    frozen = copy.deepcopy(model).train(False)
    with torch.no_grad():
        return frozen(x)


def extract_features(backbone, x):
    mode = backbone.training
    backbone.train(False)
    try:
        with torch.set_grad_enabled(False):
            return backbone(x)
    finally:
        backbone.train(mode)
