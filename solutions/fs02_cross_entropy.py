"""Reference solution of fs02 (cross-entropy from logits, with ignore_index and label smoothing, by hand)."""

import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    # Log-probabilities with the max trick (fs01): never the log of a probability that underflowed to 0.
    shifted = logits - logits.amax(dim=1, keepdim=True)
    logp = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))
    keep = targets != ignore_index
    # An ignored target (-100) is no class index: pick class 0 in its place, the row is masked out below.
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, picked.unsqueeze(1)).squeeze(1)
    # Label smoothing as torch defines it: the target gets 1 - eps, and eps is spread over all C classes.
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    # The mean over the targets that count: 0 / 0 = nan when every target is ignored, as torch gives.
    return per_row.sum() / keep.sum()
