# Mistake: reads F.kl_div(input, target) as KL(input || target): the model's distribution weighs the log-ratio.
# Expect: the arguments' roles swapped
import torch


def kl_div(input, target, log_target=False):
    log_p = target if log_target else torch.log(target)
    return (input.exp() * (input - log_p)).sum() / input.shape[0]


def kl_divergence(p_logits, q_logits):
    log_p = torch.log_softmax(p_logits, dim=1)
    log_q = torch.log_softmax(q_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum() / p_logits.shape[0]


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
