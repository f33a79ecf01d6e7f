"""A correct variant: F.unfold for the patches, F.conv2d for the embedding, the cls token broadcast with repeat."""

import torch
import torch.nn.functional as F


def patchify(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def patch_embed(images, weight, bias, patch_size):
    return F.conv2d(images, weight, bias, stride=patch_size).flatten(2).transpose(1, 2)


def vit_input(images, weight, bias, cls_token, pos_embed, patch_size):
    x = patch_embed(images, weight, bias, patch_size)
    x = torch.cat((cls_token.repeat(x.shape[0], 1, 1), x), dim=1)
    return x + pos_embed


def pool(tokens):
    return tokens[:, 0]
