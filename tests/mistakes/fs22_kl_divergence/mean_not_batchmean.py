# Mistake: averages every term (reduction='mean'), the reduction F.kl_div warns about: off by a factor C.
# Expect: reduction='mean'
import torch


def kl_div(input, target, log_target=False):
    if log_target:
        terms = target.exp() * (target - input)
    else:
        terms = torch.xlogy(target, target) - target * input
    return terms.mean()


def kl_divergence(p_logits, q_logits):
    log_p = torch.log_softmax(p_logits, dim=1)
    log_q = torch.log_softmax(q_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum() / p_logits.shape[0]


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
