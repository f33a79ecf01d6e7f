"""fs29 - Linear attention, from scratch: a feature map, causal by cumulative sums, and the same as an RNN.

Softmax attention weighs key j for query i by exp(q_i . k_j); linear attention replaces it with
phi(q_i) . phi(k_j) for a positive feature map phi. Then out_i = phi(q_i) S / (phi(q_i) . z) with
S = sum_j phi(k_j) v_j^T and z = sum_j phi(k_j): the sums over keys are computed once, so the cost is linear in
the length. Causal: S and z over keys 0..i only, a cumulative sum over time, or a state updated step by step.
Run `grade fs29` to check your work.
"""

import torch
import torch.nn.functional as F


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x), elementwise: elu(x) + 1 (Katharopoulos et al.), positive everywhere."""
    # TODO: the feature map
    raise NotImplementedError


def linear_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """Linear attention of q [B, H, Tq, D] over k [B, H, Tk, D] and v [B, H, Tk, Dv]; returns [B, H, Tq, Dv].

    out_i = phi(q_i) S / (phi(q_i) . z + eps), S = sum_j phi(k_j) v_j^T ([D, Dv]), z = sum_j phi(k_j) ([D]).
    causal: when True (then Tq == Tk), the sums run over keys 0..i only (key i included). Never form [Tq, Tk].
    """
    # TODO: phi of the queries and keys; the sums S and z (causal: cumulative over time)
    # TODO: the numerator phi(q) S and the denominator phi(q) . z + eps
    raise NotImplementedError


def linear_attention_step(
    q_t: torch.Tensor, k_t: torch.Tensor, v_t: torch.Tensor, state=None, eps: float = 1e-6
):
    """One step of causal linear attention as an RNN: q_t, k_t [B, H, D], v_t [B, H, Dv].

    state: None before the first step, else the (S [B, H, D, Dv], z [B, H, D]) this function returned.
    Adds the current key and value to the state, then returns (out_t [B, H, Dv], (S, z)).
    """
    # TODO: zeros when state is None; add phi(k_t) v_t^T and phi(k_t); then the output of q_t
    raise NotImplementedError


if __name__ == "__main__":
    q = k = v = torch.randn(1, 2, 5, 4)
    print(linear_attention(q, k, v, causal=True).shape)
