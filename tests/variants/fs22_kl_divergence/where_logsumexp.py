# A correct answer written differently: torch.where for the zero probabilities, log-probabilities by logsumexp,
# the mean over the rows as a per-row sum then .mean().
import torch


def kl_div(input, target, log_target=False):
    if log_target:
        p, log_p = target.exp(), target
    else:
        p = target
        log_p = torch.log(torch.where(target > 0, target, torch.ones_like(target)))  # log 1 = 0 where p is 0
    per_row = (p * (log_p - input)).sum(dim=-1)
    return per_row.reshape(input.shape[0], -1).sum(dim=1).mean()


def kl_divergence(p_logits, q_logits):
    log_p = p_logits - torch.logsumexp(p_logits, dim=-1, keepdim=True)
    log_q = q_logits - torch.logsumexp(q_logits, dim=-1, keepdim=True)
    return (torch.exp(log_p) * (log_p - log_q)).sum(dim=-1).mean()


def distillation_loss(student_logits, teacher_logits, temperature=2.0):
    with torch.no_grad():
        teacher = teacher_logits / temperature
    student = student_logits / temperature
    first, second = teacher, student
    return kl_divergence(first, second) * temperature * temperature
