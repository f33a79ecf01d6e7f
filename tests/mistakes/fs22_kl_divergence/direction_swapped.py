# Mistake: the distillation KL in the other direction, KL(student || teacher).
# Expect: that is KL(student || teacher)
import torch


def kl_div(input, target, log_target=False):
    if log_target:
        terms = target.exp() * (target - input)
    else:
        terms = torch.xlogy(target, target) - target * input
    return terms.sum() / input.shape[0]


def kl_divergence(p_logits, q_logits):
    log_p = torch.log_softmax(p_logits, dim=1)
    log_q = torch.log_softmax(q_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum() / p_logits.shape[0]


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    s, t = student_logits / temperature, teacher_logits.detach() / temperature
    first, second = s, t
    return temperature ** 2 * kl_divergence(first, second)
