"""fs28 - Sliding-window causal attention and ALiBi biases, from scratch.

A sliding window lets query i attend only the most recent keys (Mistral, Longformer): a band below the diagonal
of the causal mask. ALiBi (BLOOM, MPT) adds no position embedding; it adds to each score a penalty that grows
linearly with the distance i - j, with one slope per head: a geometric sequence, and for a number of heads that is
not a power of two, the slopes of the power of two below, then every other slope of twice as many. Run `grade fs28`
to check your work.
"""

import math

import torch


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """The ALiBi slopes of num_heads heads, a float32 tensor [num_heads].

    For n a power of two: 2^(-8/n), 2^(-16/n), ..., 2^(-8) (head h gets 2^(-8 (h + 1) / n)).
    Otherwise, with c the largest power of two below num_heads: the c slopes of c heads, then the slopes of 2c
    heads at even indices (0, 2, 4, ...), as many as num_heads - c.
    """
    # TODO: the slopes of a power of two, then the rule for the other head counts
    raise NotImplementedError


def alibi_bias(slopes: torch.Tensor, t: int) -> torch.Tensor:
    """The ALiBi bias [H, T, T] for slopes [H]: bias[h, i, j] = slopes[h] * (j - i), on slopes' device and dtype.

    Only the entries j <= i are checked (the causal mask hides the others).
    """
    # TODO: the distances j - i as a [T, T] tensor, times one slope per head
    raise NotImplementedError


def sliding_window_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int, slopes: torch.Tensor | None = None
) -> torch.Tensor:
    """Causal attention with a sliding window, and the ALiBi bias when slopes is given.

    q, k, v: [B, H, T, D]; returns [B, H, T, D] in q's dtype. The scores are q @ k^T / sqrt(D), plus
    alibi_bias(slopes, T) when slopes [H] is given. Query i attends keys j with i - window < j <= i: the last `window` keys, itself included (Mistral's sliding_window).
    """
    # TODO: the scaled scores, plus the ALiBi bias when slopes is given
    # TODO: -inf outside the causal window, then the softmax over the keys and the weighted sum of v
    raise NotImplementedError


if __name__ == "__main__":
    print(alibi_slopes(8))
    q = k = v = torch.randn(1, 4, 6, 8)
    print(sliding_window_attention(q, k, v, window=3, slopes=alibi_slopes(4)).shape)
