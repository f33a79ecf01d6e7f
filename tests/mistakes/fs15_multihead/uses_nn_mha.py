# Mistake: wraps nn.MultiheadAttention, which the statement forbids.
# Expect: PyTorch's own

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed_dim, num_heads, bias=bias, batch_first=True)

    def forward(self, x, key_padding_mask=None, causal=False):
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1) if causal else None
        return self.mha(x, x, x, key_padding_mask=key_padding_mask, attn_mask=mask, need_weights=False)[0]
