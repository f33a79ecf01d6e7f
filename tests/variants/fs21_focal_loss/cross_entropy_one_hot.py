# A correct answer written differently: p_t = exp(-ce) from torch's per-element cross-entropies, the multi-class
# loss as a one-hot sum over the classes.
import torch
import torch.nn.functional as F


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = torch.exp(-ce)  # ce = -log p_t
    loss = (1 - p_t) ** gamma * ce
    if alpha is not None and alpha >= 0:
        loss = loss * (targets * alpha + (1 - targets) * (1 - alpha))
    return loss.mean()


def focal_loss(logits, targets, alpha=None, gamma=2.0):
    one_hot = F.one_hot(targets, logits.shape[1]).to(logits.dtype)
    logp = F.log_softmax(logits, dim=1)
    terms = -one_hot * (1 - logp.exp()) ** gamma * logp
    if alpha is not None:
        terms = terms * alpha
    return terms.sum(dim=1).mean()
