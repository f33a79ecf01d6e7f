# Mistake: the binary cross-entropy as -log(sigmoid(x)) and -log(1 - sigmoid(x)): log(0) once the sigmoid underflows.
# Expect: overflow or a log(0)
import torch


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = -(targets * torch.log(p) + (1 - targets) * torch.log(1 - p))
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
