# Mistake: takes m from the first block only and never updates it.
# Expect: overflowed

import math

import torch


def merge_stats(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    shift = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    return m, l1 * torch.exp(m1 - shift) + l2 * torch.exp(m2 - shift)


def online_softmax(x, block_size):
    m = x[..., :block_size].amax(dim=-1, keepdim=True)
    l = x.new_zeros((*x.shape[:-1], 1))
    for start in range(0, x.size(-1), block_size):
        block = x[..., start:start + block_size]
        l = l + torch.exp(block - m).sum(dim=-1, keepdim=True)
    return torch.exp(x - m) / l


def tiled_attention(q, k, v, block_size, causal=False):
    tq, tk = q.size(-2), k.size(-2)
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))
    l = q.new_zeros((*q.shape[:-1], 1))
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))
    rows = torch.arange(tq, device=q.device)[:, None]
    for start in range(0, tk, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(q.size(-1))
        if causal:
            cols = torch.arange(start, start + s.size(-1), device=q.device)
            s = s.masked_fill(cols > rows, float("-inf"))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - shift)
        alpha = torch.exp(m - shift)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v[..., start:start + block_size, :]
        m = m_new
    out = acc / l
    return out
