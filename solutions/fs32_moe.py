"""Reference solution of fs32 (a mixture-of-experts layer: top-k routing, dispatch and combine, load balancing)."""

import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.up_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.down_proj = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MoE(nn.Module):
    def __init__(self, d_model, d_hidden, n_experts, top_k):
        super().__init__()
        self.n_experts, self.top_k = n_experts, top_k
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d_model, d_hidden) for _ in range(n_experts))

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])  # [N, d_model]
        probs = torch.softmax(self.router(tokens), dim=-1)  # [N, E]: over the experts, not the tokens
        weights, chosen = probs.topk(self.top_k, dim=-1)  # [N, k] each
        gates = weights / weights.sum(dim=-1, keepdim=True)  # [N, k]: the weight of each chosen expert
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            rows, slot = (chosen == e).nonzero(as_tuple=True)  # the tokens routed to e, and at which of their k
            if rows.numel() > 0:
                out = out.index_add(0, rows, gates[rows, slot, None] * expert(tokens[rows]))
        # Switch Transformer's loss: f from the assignments (counts, no gradient), P from the probabilities.
        counts = F.one_hot(chosen, self.n_experts).sum(dim=(0, 1))  # [E]
        f = counts.to(probs.dtype) / chosen.numel()
        aux = self.n_experts * (f * probs.mean(dim=0)).sum()
        return out.reshape(x.shape), aux
