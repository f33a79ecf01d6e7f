# Mistake: logp[:, targets] picks every target for every row (an [N, N] matrix) instead of one per row.
# Expect: picks every target for every row
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    per_row = (1 - label_smoothing) * -logp[:, picked] - label_smoothing * logp.mean(dim=1, keepdim=True)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
