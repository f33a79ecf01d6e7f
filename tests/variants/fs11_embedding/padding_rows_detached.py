# Correct: the padding rows copied from a detached table, the other rows looked up; ids of padding only give a
# lookup with no graph, and need none (their gradient is zero).

import torch
from torch import nn


class Embedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None):
        super().__init__()
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings  # -1 is the last row, as nn.Embedding counts
        self.padding_idx = padding_idx
        self.weight = nn.Parameter(torch.randn(num_embeddings, embedding_dim))  # N(0, 1), as nn.Embedding
        if padding_idx is not None:
            with torch.no_grad():
                self.weight[padding_idx] = 0.0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if self.padding_idx is None:
            return self.weight[ids]
        out = self.weight.detach()[ids].clone()  # the padding rows as they are, with no gradient
        keep = ids != self.padding_idx
        if not keep.any():  # padding only: no gradient is due, and none is asked
            return out
        out[keep] = self.weight[ids[keep]]  # the other rows with their graph
        return out


class TiedLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int, padding_idx: int | None = None):
        super().__init__()
        self.embedding = Embedding(vocab_size, dim, padding_idx)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.proj(self.embedding(ids)))
        # the head is embedding.weight itself, not a copy: its gradient adds the head's part to the lookup's
        return h @ self.embedding.weight.t()
