# A correct answer written differently: log p and log(1 - p) by F.logsigmoid, p_t and alpha_t by torch.where, the
# multi-class log p_t by logsumexp and indexing.
import torch
import torch.nn.functional as F


def sigmoid_focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    positive = targets == 1
    logp_t = torch.where(positive, F.logsigmoid(logits), F.logsigmoid(-logits))  # log(1 - sigmoid(x)) = logsigmoid(-x)
    loss = -(1 - logp_t.exp()).pow(gamma) * logp_t
    if alpha is not None:
        loss = loss * torch.where(positive, alpha, 1 - alpha)
    return loss.mean()


def focal_loss(logits, targets, alpha=None, gamma=2.0):
    rows = torch.arange(logits.shape[0])
    logp_t = logits[rows, targets] - torch.logsumexp(logits, dim=-1)
    weight = (1 - torch.exp(logp_t)).pow(gamma)
    if alpha is not None:
        weight = weight * alpha.gather(0, targets)
    return (-weight * logp_t).mean()
