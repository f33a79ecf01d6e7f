"""fs32 - A mixture-of-experts layer (MoE) with top-k routing, from scratch.

A router scores each token against n_experts experts; each token goes to its top_k experts only,
and their outputs are combined with the router's weights. A load-balancing loss keeps the router
from sending every token to the same few experts. Run `grade fs32` to check your work.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    """Given: one expert, fs03's SwiGLU feed-forward."""

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.up_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.down_proj = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MoE(nn.Module):
    """n_experts experts, each token sent to its top_k of them."""

    def __init__(self, d_model: int, d_hidden: int, n_experts: int, top_k: int):
        """router: nn.Linear(d_model, n_experts, bias=False); experts: an nn.ModuleList of n_experts Experts."""
        super().__init__()
        # TODO: keep n_experts and top_k, make the router and the experts
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: [..., d_model] -> (out shaped like x, aux: the load-balancing loss, a 0-dim tensor).

        probs = softmax of the router's logits over the experts; each token's top_k experts by probs;
        each chosen expert is weighted by its probability renormalised over the token's top_k
        (divided by their sum, so that a token's weights sum to 1, as in Mixtral).
        Run each expert only on the tokens routed to it.
        aux = n_experts * sum_i f_i * P_i, f_i: the fraction of the N * top_k assignments that went
        to expert i; P_i: the mean over the N tokens of probs[:, i].
        """
        # TODO: route, dispatch each expert's tokens, combine with the weights; then the loss
        raise NotImplementedError


if __name__ == "__main__":
    moe = MoE(d_model=8, d_hidden=16, n_experts=4, top_k=2)
    out, aux = moe(torch.randn(2, 5, 8))
    print(out.shape, aux.item())
