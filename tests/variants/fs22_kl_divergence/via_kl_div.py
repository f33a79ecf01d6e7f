# A correct answer written differently: kl_divergence reuses kl_div with log-probability targets, as
# F.kl_div(log_q, log_p, log_target=True) would be called.
import torch
import torch.nn.functional as F


def kl_div(input, target, log_target=False):
    log_p = target if log_target else torch.log(target)
    p = log_p.exp()
    terms = torch.where(p == 0, torch.zeros_like(p), p * (log_p - input))
    return terms.sum() / len(input)


def kl_divergence(p_logits, q_logits):
    return kl_div(F.log_softmax(q_logits, dim=-1), F.log_softmax(p_logits, dim=-1), log_target=True)


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
