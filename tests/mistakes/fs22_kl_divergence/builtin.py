# Mistake: calls the built-in the statement forbids; the values are right, and torch's.
# Expect: torch's own `kl_div`
import torch
import torch.nn.functional as F


def kl_div(input, target, log_target=False):
    return F.kl_div(input, target, reduction="batchmean", log_target=log_target)


def kl_divergence(p_logits, q_logits):
    return kl_div(torch.log_softmax(q_logits, dim=1), torch.log_softmax(p_logits, dim=1), log_target=True)


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    return temperature ** 2 * kl_divergence(teacher_logits.detach() / temperature, student_logits / temperature)
