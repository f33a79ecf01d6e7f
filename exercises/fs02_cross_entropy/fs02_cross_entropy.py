"""fs02 - Cross-entropy from scratch: logits, ignore_index and label smoothing.

cross_entropy(logits, targets) is the loss of a classifier: for each row, -log p(target), where p is the
softmax of that row's logits; then the mean over the targets that count (not ignored), as F.cross_entropy's default reduction='mean'. Two options, as F.cross_entropy has them:
- ignore_index: rows whose target equals it (-100 by default, padding for instance) add nothing and do not count;
- label_smoothing = eps: the target distribution is (1 - eps) on the target class plus eps / C on each of the
  C classes, so the row's loss is (1 - eps) * (-log p(target)) + eps * mean over the classes of -log p.

Write it yourself: no F.cross_entropy, nn.CrossEntropyLoss, F.nll_loss or nn.NLLLoss, no log_softmax in any
spelling (torch.logsumexp is allowed). Run `grade fs02` to check your work.
"""

import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """The loss, a scalar tensor, as F.cross_entropy(logits, targets, ignore_index=..., label_smoothing=...,
    reduction='mean') gives it.

    logits: [N, C] float (N may be 1); targets: [N] int64, each a class in 0..C-1 or ignore_index.
    With every target ignored the result is nan, as torch gives (0 / 0).
    """
    # TODO: log-probabilities first (fs01's trick), then pick each row's target, smooth, mask, reduce.
    raise NotImplementedError


if __name__ == "__main__":
    logits = torch.tensor([[2.0, 0.5, -1.0], [1000.0, 0.0, -1000.0], [0.3, 0.2, 0.1]])
    targets = torch.tensor([0, 1, -100])
    print(cross_entropy(logits, targets))  # about 500.12: the mean of 0.241 and 1000.0, the ignored row left out
    print(cross_entropy(logits, targets, label_smoothing=0.1))  # about 500.20
