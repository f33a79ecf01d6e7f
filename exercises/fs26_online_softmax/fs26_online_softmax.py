"""fs26 - Online softmax and FlashAttention-style tiled attention, from scratch.

A softmax needs the max and the sum of exp over a whole row. The online softmax reads the row in blocks and keeps
two running numbers: m, the max so far, and l, the sum of exp(x - m) so far; when a block raises the max, the old
sum is rescaled by exp(m_old - m_new). FlashAttention does the same over blocks of keys, rescaling its running
output too, so the [Tq, Tk] score matrix is never formed. Write it with tensor operations, without
torch.softmax, torch.logsumexp or F.scaled_dot_product_attention. Run `grade fs26` to check your work.
"""

import math

import torch


def merge_stats(
    m1: torch.Tensor, l1: torch.Tensor, m2: torch.Tensor, l2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The softmax statistics (m, l) of two disjoint parts of the same rows, merged into those of their union.

    m1, m2: the max of each part; l1, l2: the sum of exp(x - m1) over part 1 and of exp(x - m2) over part 2.
    All four have the same shape. An empty part has m = -inf and l = 0; two empty parts merge into (-inf, 0),
    never NaN.
    """
    # TODO: the new max, then both sums rescaled to it and added
    raise NotImplementedError


def online_softmax(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """Softmax over the last dimension of x, reading x in blocks of block_size columns.

    One pass over the blocks keeps the running (m, l) of each row (the last block may be shorter); then the
    result is exp(x - m) / l. Same shape and dtype as x (float16 included); finite for any finite x.
    """
    # TODO: m = -inf and l = 0 per row, merged with each block's (max, sum of exp(block - max))
    raise NotImplementedError


def tiled_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False
):
    """softmax(q @ k^T / sqrt(d_head)) @ v, computed over blocks of block_size keys.

    q: [B, H, Tq, D], k: [B, H, Tk, D], v: [B, H, Tk, Dv]. For each block of keys: its scores [B, H, Tq, block],
    the running max m and sum l of each query, and the running output, rescaled when m grows; never the whole
    [Tq, Tk] score matrix. The last block may be shorter.
    causal: when True (then Tq == Tk), query i attends keys 0..i only.
    Returns [B, H, Tq, Dv] in q's dtype.
    """
    # TODO: m, l and the output accumulator per query; for each block, the scores (causal: by the keys' positions)
    # TODO: rescale l and the accumulator by exp(m_old - m_new), add the block, and divide by l at the end
    raise NotImplementedError


if __name__ == "__main__":
    x = torch.randn(2, 7)
    print(online_softmax(x, 3).sum(-1))
    q, k, v = torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
    print(tiled_attention(q, k, v, 2, causal=True).shape)
