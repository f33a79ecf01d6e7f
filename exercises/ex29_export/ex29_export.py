"""ex29 - Export: a model saved as a standalone program, and a branch that tracing would freeze.

Save two models so that they run without their Python code: with TorchScript (torch.jit.trace or
torch.jit.script, then torch.jit.save) or with torch.export (torch.export.export, then torch.export.save).
Run `grade ex29` to check your work.
"""

import torch
from torch import nn


def export_mlp(model: nn.Module, example: torch.Tensor, path: str) -> None:
    """Save `model` (Linear, BatchNorm, Dropout: no data-dependent branch) at `path` as a program that
    computes what the model computes at inference, for inputs shaped like `example`."""
    # TODO: the model arrives in training mode
    raise NotImplementedError


def export_gated(model: nn.Module, example: torch.Tensor, path: str) -> None:
    """Save `model`, whose forward picks a branch from the values of its input (an `if` on a tensor; a
    Dropout before each head), at `path` as a program that keeps both branches and computes what the model
    computes at inference."""
    # TODO: which of trace, script and export keeps an `if` on tensor values?
    raise NotImplementedError


if __name__ == "__main__":
    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos, self.neg = nn.Linear(4, 2), nn.Linear(4, 2)

        def forward(self, x):
            if x.mean() > 0:
                return self.pos(x)
            return self.neg(x)

    model = Gated()
    export_gated(model, torch.ones(3, 4), "gated.pt")
    loaded = torch.jit.load("gated.pt")
    x = -torch.ones(3, 4)
    print("same on the other branch:", torch.allclose(loaded(x), model(x)))
