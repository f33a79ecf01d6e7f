"""ex12 - train() vs eval(): Dropout, BatchNorm, no_grad and inference_mode.

1. MyDropout: your own nn.Dropout, which behaves differently in train() and eval() mode.
2. evaluate: a bug fix. It runs the model on validation data between training epochs, and the
   validation scores jump around from one call to the next.
3. extract_features: features of a frozen backbone, for training a small head on top of them.

Run `grade ex12` to check your work.
"""

import torch
from torch import nn


class MyDropout(nn.Module):
    """Inverted dropout, like nn.Dropout(p), for 0 <= p < 1.

    In train mode: each element is zeroed with probability p, independently, with a new random mask on
    every call, and the kept elements are scaled by 1/(1-p). In eval mode: the input comes back unchanged.
    Output: same shape as x. Never modify x itself.
    """

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO: how does a module know whether model.train() or model.eval() was called last?
        raise NotImplementedError


def evaluate(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Return model(x) as used for validation: with Dropout off and BatchNorm on its running statistics,
    without building an autograd graph, and leaving the model in the mode it was in before the call.
    """
    # FIXME: this gives a different answer each time it is called, and it changes the model.
    with torch.no_grad():
        return model(x)


def extract_features(backbone: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Return backbone(x), computed in eval mode with no autograd graph through the frozen backbone,
    as ordinary tensors that a trainable head can learn from (head(features).backward() must work).
    Leave the backbone in the mode it was in before the call.
    """
    # TODO: torch.no_grad() or torch.inference_mode()? Only one of them works here.
    raise NotImplementedError


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
    x = torch.randn(16, 4)
    print(torch.equal(evaluate(model, x), evaluate(model, x)), "(should be True)")
    print("still training:", model.training)
