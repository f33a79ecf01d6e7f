# Mistake: builds the logits against the first N keys only, as if keys were always [N, D].
# Expect: the keys beyond the first N were left out
import torch
import torch.nn.functional as F


def similarities(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    n = query.shape[0]
    logits = similarities(query, keys[:n]) / temperature
    return F.cross_entropy(logits, torch.arange(n))


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale.exp() * similarities(image_emb, text_emb)
    positives = logits.diagonal()
    rows = (torch.logsumexp(logits, dim=1) - positives).mean()
    columns = (torch.logsumexp(logits, dim=0) - positives).mean()
    return (rows + columns) / 2
