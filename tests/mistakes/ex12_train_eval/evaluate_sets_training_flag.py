# Mistake: switches modes by assigning model.training = False, which changes the model's own flag but not its layers'.
# Expect: only changes the flag of the model itself

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
    model.training = False
    try:
        with torch.inference_mode():
            return model(x)
    finally:
        model.training = was_training


def extract_features(backbone: nn.Module, x: torch.Tensor) -> torch.Tensor:
    was_training = backbone.training
    backbone.eval()
    try:
        with torch.no_grad():
            return backbone(x)
    finally:
        backbone.train(was_training)
