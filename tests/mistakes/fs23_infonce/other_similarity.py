# Mistake: the other similarity: the raw dot product, the embeddings never normalized.
# Expect: the similarity was the raw dot product
import torch
import torch.nn.functional as F


def similarities(a, b):
    return a @ b.T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) / temperature
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale.exp() * similarities(image_emb, text_emb)
    labels = torch.arange(len(logits))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
