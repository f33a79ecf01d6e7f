# Mistake: calls F.dropout, the built-in the statement forbids (and which takes no generator).
# Expect: torch's own
import torch
import torch.nn as nn


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    return torch.nn.functional.dropout(x, p, training=training)


class Dropout(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
