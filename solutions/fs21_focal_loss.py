"""Reference solution of fs21 (focal loss from logits, binary and multi-class, with alpha weighting)."""

import torch
import torch.nn.functional as F


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    # The cross-entropy from the logits: finite where sigmoid(logit) underflows to 0 or rounds to 1.
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * targets + (1 - p) * (1 - targets)  # the probability given to the true label
    loss = ce * (1 - p_t) ** gamma  # an easy example (p_t near 1) weighs almost nothing
    if alpha is not None:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss  # alpha for positives, 1 - alpha for negatives
    return loss.mean()


def focal_loss(logits, targets, alpha=None, gamma=2.0):
    # log p_t by log_softmax (the max trick inside), never the log of a softmax that underflowed
    logp_t = torch.log_softmax(logits, dim=1).gather(1, targets.unsqueeze(1)).squeeze(1)
    loss = -(1 - logp_t.exp()) ** gamma * logp_t
    if alpha is not None:
        loss = alpha[targets] * loss  # each row weighed by its class's alpha (a mean still counts rows, not weights)
    return loss.mean()
