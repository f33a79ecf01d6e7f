"""A correct variant: torch.no_grad as a decorator, a float mask scaled once, and an eval/train
switch written with if/else."""

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x.clone()
        scale = 1.0 / (1.0 - self.p)
        mask = (torch.rand(x.shape, dtype=x.dtype, device=x.device) > self.p).float() * scale
        return mask * x


@torch.no_grad()
def _forward(model, x):
    return model(x)


def evaluate(model, x):
    if model.training:
        model.eval()
        out = _forward(model, x)
        model.train()
    else:
        out = _forward(model, x)
    return out


def extract_features(backbone, x):
    if backbone.training:
        backbone.eval()
        try:
            return _forward(backbone, x)
        finally:
            backbone.train()
    return _forward(backbone, x)
