# Mistake: turns logit_scale into a Python float: the learned temperature never gets a gradient.
# Expect: no gradient reached logit_scale
import torch
import torch.nn.functional as F


def similarities(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) / temperature
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = float(logit_scale.exp()) * similarities(image_emb, text_emb)
    labels = torch.arange(len(logits))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
