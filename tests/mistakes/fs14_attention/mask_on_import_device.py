# Mistake: the device is chosen once, at import, and the masks are made on it: "cuda" whenever a GPU is present.
# Expect: when your file is imported
import math

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def attention(q, k, v, causal=False, key_padding_mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    allowed = torch.ones(scores.shape[-2:], dtype=torch.bool, device=DEVICE)
    if causal:
        allowed = allowed.tril()
    if key_padding_mask is not None:
        allowed = allowed & (~key_padding_mask).to(DEVICE)[:, None, None, :]
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    return weights @ v
