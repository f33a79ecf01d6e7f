# Mistake: a stable softmax, then its log: a target whose probability underflowed to 0 gets log(0) = -inf.
# Expect: overflow or a log(0)
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    e = torch.exp(logits - logits.amax(dim=1, keepdim=True))
    logp = torch.log(e / e.sum(dim=1, keepdim=True))
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, picked[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
