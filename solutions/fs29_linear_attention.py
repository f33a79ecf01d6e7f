"""Reference solution of fs29 (linear attention: a feature map, causal by cumulative sums, and its recurrent form)."""

import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False, eps=1e-6):
    fq, fk = feature_map(q), feature_map(k)  # the feature map goes on the queries and keys, never on v
    if causal:
        # The sums over keys 0..t for every t: cumulative sums over time, the current key included.
        kv = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=2)  # shape [B, H, T, D, Dv]
        z = torch.cumsum(fk, dim=2)  # shape [B, H, T, D]
        num = (fq.unsqueeze(-2) @ kv).squeeze(-2)  # shape [B, H, T, Dv]
    else:
        kv = fk.transpose(-2, -1) @ v  # [B, H, D, Dv]: every key at once
        z = fk.sum(dim=2, keepdim=True)  # shape [B, H, 1, D]
        num = fq @ kv
    den = (fq * z).sum(dim=-1, keepdim=True)  # phi(q) . z, [B, H, Tq, 1]
    return num / (den + eps)


def linear_attention_step(q_t, k_t, v_t, state=None, eps=1e-6):
    fq, fk = feature_map(q_t), feature_map(k_t)
    if state is None:
        s = q_t.new_zeros(*q_t.shape, v_t.size(-1))  # [B, H, D, Dv], on q_t's device
        z = q_t.new_zeros(q_t.shape)  # shape [B, H, D]
    else:
        s, z = state
    # The current key and value first: step t attends keys 0..t, itself included.
    s = s + fk.unsqueeze(-1) * v_t.unsqueeze(-2)
    z = z + fk
    num = (fq.unsqueeze(-2) @ s).squeeze(-2)  # shape [B, H, Dv]
    den = (fq * z).sum(dim=-1, keepdim=True)
    return num / (den + eps), (s, z)
