# Correct: a one-hot matrix times the table, nn.init.normal_, the padding positions masked.
import torch
from torch import nn


class Embedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None):
        super().__init__()
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings  # -1 is the last row, as nn.Embedding counts
        self.padding_idx = padding_idx
        self.weight = nn.Parameter(torch.empty(num_embeddings, embedding_dim))
        nn.init.normal_(self.weight)
        if padding_idx is not None:
            with torch.no_grad():
                self.weight[padding_idx].fill_(0)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        one_hot = torch.nn.functional.one_hot(ids, self.weight.shape[0]).to(self.weight.dtype)
        if self.padding_idx is not None:
            keep = (ids != self.padding_idx).unsqueeze(-1).to(self.weight.dtype)
            return one_hot @ self.weight * keep + (one_hot @ self.weight * (1 - keep)).detach()
        return one_hot @ self.weight


class TiedLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int, padding_idx: int | None = None):
        super().__init__()
        self.embedding = Embedding(vocab_size, dim, padding_idx)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.proj(self.embedding(ids)))
        # the head is embedding.weight itself, not a copy: its gradient adds the head's part to the lookup's
        return h @ self.embedding.weight.t()
