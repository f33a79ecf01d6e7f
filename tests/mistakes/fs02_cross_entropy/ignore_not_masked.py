# Mistake: forgets ignore_index altogether: -100 is used as a class index.
# Expect: out of bounds
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    nll = -logp.gather(1, targets[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    keep = torch.ones_like(targets, dtype=torch.bool)
    return per_row.sum() / keep.sum()
