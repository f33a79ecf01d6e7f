# Mistake: calls model.eval() but restores with model.training = was_training: the layers stay in eval mode.
# Expect: model.train(was_training)

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x * keep / (1 - self.p)


def evaluate(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        out = model(x)
    model.training = was_training
    return out


def extract_features(backbone: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = backbone.training
    backbone.eval()
    try:
        with torch.no_grad():
            return backbone(x)
    finally:
        backbone.train(was_training)
