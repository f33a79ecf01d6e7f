# Mistake: multiplies the similarities by logit_scale itself, forgetting it is a log.
# Expect: multiplied by logit_scale itself
import torch
import torch.nn.functional as F


def similarities(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) / temperature
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale * similarities(image_emb, text_emb)
    labels = torch.arange(len(logits))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
