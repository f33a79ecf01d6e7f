"""A correct variant: the causal sums from one cumsum over the concatenation of S and z (one [D, Dv + 1] state)."""

import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False, eps=1e-6):
    fq, fk = feature_map(q), feature_map(k)
    ones = torch.ones_like(v[..., :1])
    v1 = torch.cat([v, ones], dim=-1)  # the last column carries z
    outer = fk[..., :, None] * v1[..., None, :]
    state = outer.cumsum(dim=2) if causal else outer.sum(dim=2, keepdim=True)
    both = torch.einsum("bhtd,bhtde->bhte", fq, state.expand(*fq.shape[:3], *state.shape[-2:]))
    return both[..., :-1] / (both[..., -1:] + eps)


def linear_attention_step(q_t, k_t, v_t, state=None, eps=1e-6):
    fq, fk = feature_map(q_t), feature_map(k_t)
    if state is None:
        state = (torch.zeros(*fk.shape, v_t.shape[-1], dtype=q_t.dtype, device=q_t.device),
                 torch.zeros_like(fk))
    s = state[0] + fk[..., :, None] * v_t[..., None, :]
    z = state[1] + fk
    num = (fq[..., None, :] @ s)[..., 0, :]
    return num / ((fq * z).sum(-1, keepdim=True) + eps), (s, z)
