"""A correct variant: the kept rows selected first (boolean indexing), the max trick by hand, advanced indexing."""
import torch


def cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.0):
    keep = targets.ne(ignore_index)
    x, t = logits[keep], targets[keep]
    m = x.max(dim=1, keepdim=True).values
    logp = x - m - (x - m).exp().sum(dim=1, keepdim=True).log()
    nll = -logp[torch.arange(len(t)), t]
    smooth = -logp.sum(dim=1) / logits.shape[1]
    return ((1 - label_smoothing) * nll + label_smoothing * smooth).mean()
