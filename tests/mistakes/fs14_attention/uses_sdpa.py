# Mistake: calls F.scaled_dot_product_attention, which the statement forbids.
# Expect: scaled_dot_product_attention

import math

import torch
import torch.nn.functional as F


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed.tril()
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask)[:, None, None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
