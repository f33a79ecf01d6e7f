"""fs30 - ViT patch embedding, from scratch: patches, their projection, the cls token and position embeddings.

A Vision Transformer cuts an image into P x P patches, flattens each one and projects it to a token of size E:
exactly a Conv2d with kernel_size = stride = P. A learned cls token goes first, a learned position embedding is
added to every token, and the image's representation is read from the output tokens. Any tensor operations are
fine (F.conv2d, F.unfold, reshape and permute); the layout is the lesson. Run `grade fs30` to check your work.
"""

import torch


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """The patches of images [B, C, H, W] (P = patch_size divides H and W) as [B, N, C * P * P].

    N = (H / P) * (W / P) patches in row-major order (left to right, then top to bottom); each patch
    flattened in (C, P, P) order, the layout of a Conv2d weight [E, C, P, P].
    """
    # TODO: split H and W into (patch, inside), move the patch indices first, then flatten
    raise NotImplementedError


def patch_embed(
    images: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, patch_size: int
) -> torch.Tensor:
    """[B, N, E]: each patch projected by weight [E, C, P, P] and bias [E], as
    nn.Conv2d(C, E, kernel_size=P, stride=P) followed by flatten(2).transpose(1, 2)."""
    # TODO: the patches times the flattened weight, plus the bias
    raise NotImplementedError


def vit_input(
    images: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    cls_token: torch.Tensor,
    pos_embed: torch.Tensor,
    patch_size: int,
) -> torch.Tensor:
    """The Transformer's input [B, 1 + N, E]: cls_token [1, 1, E] first, then the patch tokens, plus
    pos_embed [1, 1 + N, E] (the cls token's position included)."""
    # TODO: the patch tokens, the cls token for every image in front, then the position embeddings
    raise NotImplementedError


def pool(tokens: torch.Tensor) -> torch.Tensor:
    """The image representation [B, E] from the Transformer's output tokens [B, 1 + N, E]: the output of the cls token, the first one."""
    # TODO: the pooling the docstring names
    raise NotImplementedError


if __name__ == "__main__":
    images = torch.randn(2, 3, 8, 12)
    print(patchify(images, 4).shape)  # [2, 6, 48]
