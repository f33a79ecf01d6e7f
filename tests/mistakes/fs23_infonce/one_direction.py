# Mistake: CLIP's loss as the image->text cross-entropy only, the text->image direction forgotten.
# Expect: that is the image->text loss only
import torch
import torch.nn.functional as F


def similarities(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) / temperature
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale.exp() * similarities(image_emb, text_emb)
    return F.cross_entropy(logits, torch.arange(len(logits)))
