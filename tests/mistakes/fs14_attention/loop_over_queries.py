# Mistake: one query at a time, stacked: right everywhere but with no query at all (Tq = 0), where stack raises.
# Costs the shape check only: the values, the masks and the dtypes are right.
# Expect: stack expects a non-empty TensorList

import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    rows = []
    for i in range(q.shape[2]):
        scores = q[:, :, i:i + 1] @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # [B, H, 1, Tk]
        allowed = torch.ones(scores.shape, dtype=torch.bool)
        if causal:
            allowed[..., i + 1:] = False
        if key_padding_mask is not None:
            allowed = allowed & (~key_padding_mask)[:, None, None, :]
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
        rows.append(weights @ v)
    return torch.stack([r.squeeze(2) for r in rows], dim=2)
