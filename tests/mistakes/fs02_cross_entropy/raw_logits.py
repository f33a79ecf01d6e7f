# Mistake: takes minus the raw logit of the target, forgetting the log-softmax.
# Expect: raw logit
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logits.gather(1, picked[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logits.mean(dim=1)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
