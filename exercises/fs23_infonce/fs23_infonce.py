"""fs23 - InfoNCE and CLIP's contrastive loss, from scratch.

Contrastive learning is a classification among the batch: query i must pick its own key i (its positive) among all
the keys; every other key is a negative. The logits are the similarities of every query with every key divided by a
temperature, and the right class of row i is column i: the labels lie on the diagonal. CLIP trains both ways at once:
each image picks its text (rows) and each text its image (columns); its temperature is learned as logit_scale, the
log of 1 / temperature. Here the similarity is the cosine similarity: each embedding scaled to unit length (L2 norm 1) first.

Run `grade fs23` to check your work.
"""

import torch
import torch.nn.functional as F


def info_nce(query: torch.Tensor, keys: torch.Tensor, temperature: float = 0.1) -> torch.Tensor:
    """The InfoNCE loss, a scalar tensor: the mean over the N queries of the cross-entropy of their similarity row.

    query: [N, D]; keys: [M, D] with M >= N: keys[i] is the positive of query[i], the other keys are negatives
    (keys beyond N are extra negatives, as a MoCo queue).
    """
    # TODO: the [N, M] similarities divided by the temperature; row i's class is i.
    raise NotImplementedError


def clip_loss(image_emb: torch.Tensor, text_emb: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """CLIP's symmetric loss, a scalar tensor: the mean of the image->text and the text->image InfoNCE losses.

    image_emb, text_emb: [N, D], pair i is (image_emb[i], text_emb[i]); logit_scale: a 0-d tensor, the logits are
    logit_scale.exp() times the similarities. The gradient reaches both embeddings and logit_scale.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    q = torch.randn(4, 8)
    print(info_nce(q, q))  # small: each query is most similar to itself
    print(clip_loss(q, torch.randn(4, 8), torch.tensor(2.659)))  # random pairs: nothing learned yet
