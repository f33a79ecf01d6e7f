"""fs17 - Position encodings, from scratch: sinusoidal (Attention Is All You Need) and rotary (RoPE).

Attention by itself does not know the order of the tokens. The Transformer adds a fixed sinusoidal
vector to each position's embedding; rotary embeddings instead rotate each pair of features of the
queries and keys by an angle proportional to the position, so that q . k depends on the distance
between the two positions only. Run `grade fs17` to check your work.
"""

import torch


def sinusoidal_positions(n_positions: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The sinusoidal position encodings, a float32 tensor [n_positions, d_model] (d_model even).

    PE[pos, 2i] = sin(pos / base ** (2i / d_model)), PE[pos, 2i + 1] = cos(pos / base ** (2i / d_model)),
    for pos = 0..n_positions-1 and i = 0..d_model/2-1: sin at the even features, cos at the odd ones.
    """
    # TODO: the angles pos / base ** (2i / d_model) as a [n_positions, d_model / 2] table, then sin and cos
    raise NotImplementedError


def rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of x [..., T, D] (D even) at the int64 positions [T].

    The feature pair i (i = 0..D/2-1) of the token at position p is rotated by the angle
    p * theta_i, theta_i = base ** (-2i / D): (a, b) -> (a cos - b sin, a sin + b cos).
    Pair i is the adjacent features (2i, 2i + 1) (RoFormer, Meta's Llama code).
    Returns x's shape and dtype; compute the angles, cos and sin in float32 (or finer), whatever x's dtype.
    """
    # TODO: theta_i and the angles [T, D / 2] in float32, then rotate each pair of features
    raise NotImplementedError


if __name__ == "__main__":
    print(sinusoidal_positions(4, 6))
    q = torch.randn(1, 2, 4, 8)
    print(rope(q, torch.arange(4)).shape)
