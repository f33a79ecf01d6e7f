"""A correct variant: the assignments sorted by expert and split into one chunk per expert;
the loss from a scatter of ones and the mean of the probabilities per expert."""

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
        flat = chosen.reshape(-1)
        order = flat.argsort(stable=True)
        rows = order // self.top_k
        sizes = torch.bincount(flat, minlength=self.n_experts).tolist()
        pieces = []
        for expert, part in zip(self.experts, rows.split(sizes)):
            pieces.append(expert(tokens[part]) if len(part) else tokens.new_zeros(0, tokens.shape[-1]))
        weighted = torch.cat(pieces) * gates.reshape(-1)[order][:, None]
        out = torch.zeros_like(tokens).index_add(0, rows, weighted)
        # Switch Transformer's loss: f from the assignments (counts, no gradient), P from the probabilities.
        ones = torch.ones(flat.shape, dtype=probs.dtype, device=probs.device)
        f = torch.zeros(self.n_experts, dtype=probs.dtype, device=probs.device).scatter_add(0, flat, ones) / len(flat)
        aux = self.n_experts * torch.dot(f, probs.sum(dim=0) / tokens.shape[0])
        return out.reshape(x.shape), aux
