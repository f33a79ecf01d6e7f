"""Reference solution of fs23 (InfoNCE with extra negatives, and CLIP's symmetric contrastive loss)."""

import torch
import torch.nn.functional as F


def similarities(a, b):
    # cosine: each row scaled to unit length, then every pair's dot product
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(query, keys, temperature=0.1):
    logits = similarities(query, keys) / temperature  # [N, M]: row i's positive is column i
    # The cross-entropy with the labels on the diagonal: logsumexp of the row minus the positive's logit.
    return (torch.logsumexp(logits, dim=1) - logits.diagonal()).mean()


def clip_loss(image_emb, text_emb, logit_scale):
    logits = logit_scale.exp() * similarities(image_emb, text_emb)  # [N, N], images as rows
    positives = logits.diagonal()
    image_to_text = (torch.logsumexp(logits, dim=1) - positives).mean()  # each image picks its text: rows
    text_to_image = (torch.logsumexp(logits, dim=0) - positives).mean()  # each text picks its image: columns
    return (image_to_text + text_to_image) / 2
