"""A correct variant: the softmax of the top-k logits (the renormalised probabilities), the
tokens gathered per expert with a mask and written back with out[rows] +=; the counts by bincount."""
# Variant: routing=mixtral

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
        top_logits, chosen = self.router(tokens).topk(self.top_k, dim=-1)
        gates = torch.softmax(top_logits, dim=-1)
        out = tokens.new_zeros(tokens.shape)
        for e, expert in enumerate(self.experts):
            mask = chosen == e
            rows = mask.any(dim=-1).nonzero().squeeze(-1)
            if len(rows):
                weight = (gates * mask).sum(dim=-1)[rows]
                out[rows] += weight[:, None] * expert(tokens[rows])
        # Switch Transformer's loss: f from the assignments (counts, no gradient), P from the probabilities.
        f = torch.bincount(chosen.flatten(), minlength=self.n_experts) / (tokens.shape[0] * self.top_k)
        aux = self.n_experts * (f * probs.mean(dim=0)).sum()
        return out.reshape(x.shape), aux
