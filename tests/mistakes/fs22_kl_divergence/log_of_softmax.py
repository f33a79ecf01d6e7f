# Mistake: the log of a softmax: a class whose probability underflowed under Q gets log(0) = -inf.
# Expect: overflow or a log(0)
import torch


def kl_div(input, target, log_target=False):
    if log_target:
        terms = target.exp() * (target - input)
    else:
        terms = torch.xlogy(target, target) - target * input
    return terms.sum() / input.shape[0]


def kl_divergence(p_logits, q_logits):
    p = torch.softmax(p_logits, dim=1)
    q = torch.softmax(q_logits, dim=1)
    return (p * (torch.log(p) - torch.log(q))).sum() / p_logits.shape[0]


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
