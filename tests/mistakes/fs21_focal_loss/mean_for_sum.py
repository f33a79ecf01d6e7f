# Mistake: averages the losses, torchvision's default, where this draw (reduction='sum') adds them up.
# Expect: that is the mean over the elements
# Variant: reduction=sum
import torch
import torch.nn.functional as F


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - p_t) ** gamma
    if alpha is not None:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    return loss.mean()


def focal_loss(logits, targets, alpha=None, gamma=2.0):
    logp_t = torch.log_softmax(logits, dim=1).gather(1, targets[:, None])[:, 0]
    loss = -(1 - logp_t.exp()) ** gamma * logp_t
    if alpha is not None:
        loss = alpha[targets] * loss
    return loss.mean()
