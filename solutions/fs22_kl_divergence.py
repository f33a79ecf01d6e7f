"""Reference solution of fs22 (KL divergence as F.kl_div computes it, from logits, and the distillation loss)."""

import torch


def kl_div(input, target, log_target=False):
    # F.kl_div's order: input is log Q, target is P, and the result is KL(P || Q), summed then divided by N.
    if log_target:
        terms = target.exp() * (target - input)
    else:
        terms = torch.xlogy(target, target) - target * input  # xlogy(0, 0) = 0: a zero probability adds nothing
    return terms.sum() / input.shape[0]


def kl_divergence(p_logits, q_logits):
    # log_softmax on both sides: finite for any finite logits, never the log of a softmax that underflowed
    log_p = torch.log_softmax(p_logits, dim=1)
    log_q = torch.log_softmax(q_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum() / p_logits.shape[0]


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    # Both softened by T; T ** 2 keeps the gradients' size as T changes; the teacher is a constant.
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
