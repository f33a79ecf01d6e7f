"""fs22 - KL divergence by hand: F.kl_div's argument order, batchmean, from logits, and distillation.

KL(P || Q) = sum over classes of P * (log P - log Q): how much Q (the model) loses describing P (the data or a
teacher). It is not symmetric, and F.kl_div's argument order trips everyone: F.kl_div(input, target) takes the
log-probabilities of Q as `input` and the probabilities of P as `target`, and computes KL(target || Q).
'batchmean' sums every term and divides by the batch size (the true KL per sample; 'mean' divides by every element).

Write it yourself: no F.kl_div, torch.kl_div or nn.KLDivLoss. Run `grade fs22` to check your work.
"""

import torch


def kl_div(input: torch.Tensor, target: torch.Tensor, log_target: bool = False) -> torch.Tensor:
    """F.kl_div(input, target, reduction='batchmean', log_target=log_target), a scalar tensor.

    input: [N, C] log-probabilities of Q; target: [N, C] probabilities of P (log-probabilities with log_target).
    A target probability of exactly 0 contributes 0 (0 * log 0 = 0), never nan.
    """
    # TODO: sum P * (log P - input) over everything, then divide by the batch size.
    raise NotImplementedError


def kl_divergence(p_logits: torch.Tensor, q_logits: torch.Tensor) -> torch.Tensor:
    """KL(P || Q) per row, averaged over the N rows, with P = softmax(p_logits), Q = softmax(q_logits) ([N, C]).

    Finite for any finite logits (rows near +-1000 too).
    """
    # TODO: log-probabilities of both from the logits, then the KL.
    raise NotImplementedError


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor,
                      temperature: float = 2.0) -> torch.Tensor:
    """temperature ** 2 * KL(teacher || student), both distributions softened by the temperature, averaged over rows.

    The teacher is a constant: no gradient flows into teacher_logits.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    q = torch.log_softmax(torch.tensor([[1.0, 2.0, 0.5]]), dim=1)
    print(kl_div(q, torch.tensor([[0.0, 1.0, 0.0]])))  # finite: -log q[1], about 0.46
    print(kl_divergence(torch.tensor([[1000.0, 0.0]]), torch.tensor([[0.0, 1000.0]])))  # about 1000
