# Mistake: clamps the targets into range so that -100 does not crash, and forgets to leave those rows out.
# Expect: were counted
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    logp = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    picked = targets.clamp(0, logits.shape[1] - 1)
    nll = -logp.gather(1, picked[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    keep = torch.ones_like(targets, dtype=torch.bool)
    return per_row.sum() / keep.sum()
