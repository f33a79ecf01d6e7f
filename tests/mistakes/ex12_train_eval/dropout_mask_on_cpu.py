# Mistake: makes the mask with torch.rand(x.shape), on the CPU whatever x's device: fails for x on a GPU.
# Expect: the mask is made on the CPU

import torch
from torch import nn


class MyDropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand(x.shape) >= self.p).float()
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
