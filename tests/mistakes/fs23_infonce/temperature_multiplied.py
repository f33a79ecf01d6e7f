# Mistake: multiplies the similarities by the temperature ("a scale"), where InfoNCE divides by it.
# Expect: multiplied by the temperature
import torch
import torch.nn.functional as F


def similarities(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) * temperature
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale.exp() * similarities(image_emb, text_emb)
    positives = logits.diagonal()
    rows = (torch.logsumexp(logits, dim=1) - positives).mean()
    columns = (torch.logsumexp(logits, dim=0) - positives).mean()
    return (rows + columns) / 2
