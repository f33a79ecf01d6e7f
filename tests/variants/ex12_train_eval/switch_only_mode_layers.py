"""A correct variant: evaluate switches only the layers that read their mode (Dropout and BatchNorm) to eval
and back, leaving the model's own flag alone; MyDropout with masked_fill; extract_features through
evaluate's helper with a detach for the head."""

import torch
from torch import nn

MODE_LAYERS = (nn.Dropout, nn.BatchNorm1d, nn.BatchNorm2d)


class MyDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        drop = torch.rand_like(x) < self.p
        return x.masked_fill(drop, 0.0) / (1 - self.p)


def _run_in_eval(model, x):
    layers = [m for m in model.modules() if isinstance(m, MODE_LAYERS)]
    modes = [m.training for m in layers]
    for m in layers:
        m.eval()
    try:
        with torch.no_grad():
            return model(x)
    finally:
        for m, mode in zip(layers, modes):
            m.train(mode)


def evaluate(model, x):
    return _run_in_eval(model, x)


def extract_features(backbone, x):
    return _run_in_eval(backbone, x).detach()
