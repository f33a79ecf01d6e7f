"""A correct variant: the running output is kept normalised (FlashAttention v1's form), o = o * l_old * a / l_new + p @ v / l_new."""

import math

import torch


def merge_stats(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    safe = m.masked_fill(m == -math.inf, 0.0)
    return m, l1 * (m1 - safe).exp() + l2 * (m2 - safe).exp()


def online_softmax(x, block_size):
    n = x.shape[-1]
    m = x.new_full(x.shape[:-1] + (1,), -math.inf)
    l = x.new_zeros(x.shape[:-1] + (1,))
    start = 0
    while start < n:
        block = x[..., start:min(start + block_size, n)]
        bm = block.amax(-1, keepdim=True)
        m, l = merge_stats(m, l, bm, (block - bm).exp().sum(-1, keepdim=True))
        start += block_size
    return (x - m).exp() / l


def tiled_attention(q, k, v, block_size, causal=False):
    tq, tk = q.shape[-2], k.shape[-2]
    m = q.new_full(q.shape[:-1] + (1,), -math.inf)
    l = q.new_zeros(q.shape[:-1] + (1,))
    o = q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    for s in range(0, tk, block_size):
        e = min(s + block_size, tk)
        scores = torch.matmul(q, k[..., s:e, :].transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if causal:
            hide = torch.ones(tq, e - s, dtype=torch.bool, device=q.device).triu(1 - s)
            scores = scores.masked_fill(hide, -math.inf)
        bm = scores.amax(-1, keepdim=True)
        safe_b = bm.masked_fill(bm == -math.inf, 0.0)
        p = (scores - safe_b).exp()
        m_new, l_new = merge_stats(m, l, bm, p.sum(-1, keepdim=True))
        safe = m_new.masked_fill(m_new == -math.inf, 0.0)
        keep = torch.where(l_new > 0, l * (m - safe).exp() / l_new, torch.zeros_like(l_new))
        add = torch.where(l_new > 0, (bm - safe).exp().masked_fill(bm == -math.inf, 0.0) / l_new, torch.zeros_like(l_new))
        o = o * keep + add * (p @ v[..., s:e, :])
        m, l = m_new, l_new
    out = o
    return out
