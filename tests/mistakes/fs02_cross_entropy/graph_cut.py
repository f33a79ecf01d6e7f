# Mistake: detaches the logits "to save memory": the value is right, but no gradient reaches the model.
# Expect: graph from the logits to the loss was cut
import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    x = logits.detach()
    logp = x - torch.logsumexp(x, dim=1, keepdim=True)
    keep = targets != ignore_index
    picked = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(1, picked[:, None])[:, 0]
    per_row = (1 - label_smoothing) * nll - label_smoothing * logp.mean(dim=1)
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
