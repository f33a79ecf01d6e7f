"""fs21 - Focal loss from logits: binary and multi-class, alpha weighting, gamma = 0 is cross-entropy.

Focal loss (RetinaNet, Lin et al. 2017) is the cross-entropy of each example times (1 - p_t) ** gamma, where p_t
is the probability the model gives to the true label: easy examples (p_t near 1) weigh almost nothing, so the
many easy negatives of an imbalanced problem stop drowning the few hard ones. With gamma = 0 it is cross-entropy.
alpha weighs the classes: alpha for positives and 1 - alpha for negatives (binary), alpha[c] for the rows of
class c (multi-class). Both losses return the mean over every element (reduction='mean').

Work from the logits: never take the log of a probability that may underflow to 0. Run `grade fs21` to check your
work.
"""

import torch
import torch.nn.functional as F


def sigmoid_focal_loss(logits: torch.Tensor, targets: torch.Tensor, alpha: float | None = 0.25,
                       gamma: float = 2.0) -> torch.Tensor:
    """Binary focal loss, a scalar tensor, as torchvision.ops.sigmoid_focal_loss(reduction='mean').

    logits: any shape (one logit per element, p = sigmoid(logit)); targets: the same shape and dtype, 0. or 1.
    alpha: the weight of the positives (1 - alpha for the negatives), or None for no weighting.
    """
    # TODO: the cross-entropy from the logits, the focal factor (1 - p_t) ** gamma, alpha, then reduce.
    raise NotImplementedError


def focal_loss(logits: torch.Tensor, targets: torch.Tensor, alpha: torch.Tensor | None = None,
               gamma: float = 2.0) -> torch.Tensor:
    """Multi-class focal loss, a scalar tensor: mean over the rows of -alpha[t] * (1 - p_t) ** gamma * log p_t.

    logits: [N, C] (p = softmax over the classes); targets: [N] int64 classes; alpha: [C] class weights or None.
    """
    # TODO: log p_t from the logits (no log of a softmax), the focal factor, alpha[targets], then reduce.
    raise NotImplementedError


if __name__ == "__main__":
    x = torch.tensor([[3.0, -1.0], [-200.0, 0.5]])
    t = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    print(sigmoid_focal_loss(x, t))  # finite: the element with logit -200 and target 1 costs 0.25 * 200
    print(focal_loss(torch.tensor([[2.0, 0.5, -1.0], [0.0, 0.0, 0.0]]), torch.tensor([0, 2])))
