"""A correct variant: einsum, the softmax written out with the max trick, computed in float32 for half inputs."""

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    dtype = q.dtype
    if dtype in (torch.float16, torch.bfloat16):
        q, k, v = q.float(), k.float(), v.float()
    scores = torch.einsum("bhqd,bhkd->bhqk", q / math.sqrt(q.shape[-1]), k)
    keep = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        i = torch.arange(scores.shape[-2])[:, None]
        j = torch.arange(scores.shape[-1])[None, :]
        keep = keep & (j <= i)
    if key_padding_mask is not None:
        keep = keep & (~key_padding_mask).unsqueeze(1).unsqueeze(2)
    scores = scores.masked_fill(~keep, float("-inf"))
    top = scores.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # a row of -inf: no shift, all zeros below
    e = torch.where(keep, torch.exp(scores - top), torch.zeros_like(scores))
    total = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return torch.einsum("bhqk,bhkd->bhqd", weights, v).to(dtype)
