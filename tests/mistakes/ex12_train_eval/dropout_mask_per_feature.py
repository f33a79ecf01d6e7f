# Mistake: draws one random number per feature and broadcasts the mask over the batch: every sample loses the same features.
# Expect: zeroed the same elements in every row

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand(x.shape[-1]) >= self.p).to(x.dtype)
        return x * keep / (1 - self.p)


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
