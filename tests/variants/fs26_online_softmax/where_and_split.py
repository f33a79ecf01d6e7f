"""A correct variant: torch.where guards each empty part, torch.split walks the blocks, einsum computes the scores."""

import torch

NEG = float("-inf")


def merge_stats(m1, l1, m2, l2):
    m = torch.max(m1, m2)
    # where a part is empty, its term is 0 (exp(nan) there is never used)
    a = torch.where(m1 == NEG, torch.zeros_like(l1), l1 * torch.exp(m1 - m))
    b = torch.where(m2 == NEG, torch.zeros_like(l2), l2 * torch.exp(m2 - m))
    return m, a + b


def online_softmax(x, block_size):
    m = torch.full_like(x[..., :1], NEG)
    l = torch.zeros_like(x[..., :1])
    for block in torch.split(x, block_size, dim=-1):
        bm = block.max(dim=-1, keepdim=True).values
        m, l = merge_stats(m, l, bm, (block - bm).exp().sum(-1, keepdim=True))
    return (x - m).exp() / l


def tiled_attention(q, k, v, block_size, causal=False):
    scale = q.shape[-1] ** -0.5
    m = torch.full_like(q[..., :1], NEG)
    l = torch.zeros_like(q[..., :1])
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    qpos = torch.arange(q.shape[-2], device=q.device).unsqueeze(-1)
    start = 0
    for kb, vb in zip(torch.split(k, block_size, dim=-2), torch.split(v, block_size, dim=-2)):
        s = torch.einsum("bhqd,bhkd->bhqk", q, kb) * scale
        if causal:
            kpos = start + torch.arange(kb.shape[-2], device=q.device)
            s = torch.where(kpos <= qpos, s, torch.full_like(s, NEG))
        start += kb.shape[-2]
        bm = s.max(dim=-1, keepdim=True).values
        p = torch.where(bm == NEG, torch.zeros_like(s), (s - bm).exp())
        m_new, l = merge_stats(m, l, bm, p.sum(-1, keepdim=True))
        acc = torch.where(m == NEG, torch.zeros_like(acc), acc * torch.exp(m - m_new)) + torch.where(
            bm == NEG, torch.zeros_like(bm), torch.exp(bm - m_new)) * torch.einsum("bhqk,bhkd->bhqd", p, vb)
        m = m_new
    out = acc / l
    return out
