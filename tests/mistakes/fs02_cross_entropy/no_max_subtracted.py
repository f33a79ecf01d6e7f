# Mistake: log(sum(exp(logits))) with no max subtracted: exp overflows on logits near 1000.
# Expect: overflow
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    lse = torch.log(torch.exp(logits).sum(dim=1))
    logp = logits - lse[:, None]
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, picked[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
