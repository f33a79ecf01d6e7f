# Mistake: the old (non-inverted) dropout the seed describes: drop without scaling in training, scale by (1-p) in evaluation.
# Expect: inverted dropout

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x * (1 - self.p)
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x * keep


def evaluate(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            return model(x)
    finally:
        model.train(was_training)


def extract_features(backbone: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = backbone.training
    backbone.eval()
    try:
        with torch.no_grad():
            return backbone(x)
    finally:
        backbone.train(was_training)
