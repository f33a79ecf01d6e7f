# Mistake: uses relu(x) where the statement asks elu(x) + 1.
# Expect: the feature map relu instead of
# Variant: feature=elu

import torch
import torch.nn.functional as F


def feature_map(x):
    return F.relu(x)


def linear_attention(q, k, v, causal=False, eps=1e-6):
    fq, fk = feature_map(q), feature_map(k)
    if causal:
        kv = torch.cumsum(fk.unsqueeze(-1) * v.unsqueeze(-2), dim=2)
        z = torch.cumsum(fk, dim=2)
        num = (fq.unsqueeze(-2) @ kv).squeeze(-2)
    else:
        kv = fk.transpose(-2, -1) @ v
        z = fk.sum(dim=2, keepdim=True)
        num = fq @ kv
    den = (fq * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)


def linear_attention_step(q_t, k_t, v_t, state=None, eps=1e-6):
    fq, fk = feature_map(q_t), feature_map(k_t)
    if state is None:
        s = q_t.new_zeros(*q_t.shape, v_t.size(-1))
        z = q_t.new_zeros(q_t.shape)
    else:
        s, z = state
    s = s + fk.unsqueeze(-1) * v_t.unsqueeze(-2)
    z = z + fk
    num = (fq.unsqueeze(-2) @ s).squeeze(-2)
    den = (fq * z).sum(dim=-1, keepdim=True)
    return num / (den + eps), (s, z)
