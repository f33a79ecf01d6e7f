# Mistake: calls the built-in the statement forbids; the values are right, and torch's.
# Expect: torch's own `cross_entropy`
import torch
import torch.nn.functional as F


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    return F.cross_entropy(logits, targets, ignore_index=ignore_index, label_smoothing=label_smoothing,
                           reduction="mean")
