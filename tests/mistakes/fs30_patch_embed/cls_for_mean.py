# Mistake: returns the cls token where the statement asks the mean of the patch tokens.
# Expect: the other pooling
# Variant: pooling=mean

import torch


def patchify(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def patch_embed(images, weight, bias, patch_size):
    return patchify(images, patch_size) @ weight.reshape(weight.size(0), -1).T + bias


def vit_input(images, weight, bias, cls_token, pos_embed, patch_size):
    tokens = patch_embed(images, weight, bias, patch_size)
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) + pos_embed


def pool(tokens):
    return tokens[:, 0]
