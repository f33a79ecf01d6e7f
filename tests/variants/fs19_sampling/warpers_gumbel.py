"""A correct variant: one small function per filter, as Hugging Face's logits warpers, and the draw by the Gumbel-max
trick: argmax(log p + Gumbel noise) with the noise from the generator."""

import torch


def top_k_filter(logits, k):
    if k is None or k >= logits.shape[-1]:
        return logits
    threshold = torch.topk(logits, k).values[..., -1, None]
    return torch.where(logits < threshold, torch.full_like(logits, float("-inf")), logits)


def top_p_filter(logits, p):
    if p is None:
        return logits
    sorted_logits, idx = torch.sort(logits, descending=False)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative <= (1 - p)  # ascending: the least probable tokens whose total stays within 1 - p
    remove[..., -1:] = False
    return logits.masked_fill(remove.scatter(-1, idx, remove), float("-inf"))


def sampling_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = logits / temperature  # first: top-k and top-p see the tempered distribution
    logits = top_p_filter(top_k_filter(logits, top_k), top_p)
    return torch.softmax(logits, dim=-1)


def sample(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    log_p = sampling_probs(logits, temperature, top_k, top_p).log()
    u = torch.rand(log_p.shape, generator=generator).clamp_min(1e-20)
    return torch.argmax(log_p - torch.log(-torch.log(u)), dim=-1)
