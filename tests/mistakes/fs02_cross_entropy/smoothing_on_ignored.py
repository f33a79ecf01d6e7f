# Mistake: masks the ignored rows' nll, but adds the smoothing term of every row, ignored ones included.
# Expect: smoothing term of the ignored rows
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, picked[:, None])[:, 0]
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    return per_row.sum() / keep.sum()
