# Mistake: writes the lookup's backward by hand and assigns each lookup's gradient to its row.
# Expect: appear more than once
import torch
from torch import nn


class Lookup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, ids, padding_idx):
        ctx.save_for_backward(ids)
        ctx.num, ctx.padding_idx = weight.shape[0], padding_idx
        return weight[ids]

    @staticmethod
    def backward(ctx, grad_output):
        (ids,) = ctx.saved_tensors
        grad = grad_output.new_zeros(ctx.num, grad_output.shape[-1])
        grad[ids.reshape(-1)] = grad_output.reshape(-1, grad_output.shape[-1])
        if ctx.padding_idx is not None:
            grad[ctx.padding_idx] = 0.0
        return grad, None, None


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
        return Lookup.apply(self.weight, ids, self.padding_idx)


class TiedLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int, padding_idx: int | None = None):
        super().__init__()
        self.embedding = Embedding(vocab_size, dim, padding_idx)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.proj(self.embedding(ids)))
        # the head is embedding.weight itself, not a copy: its gradient adds the head's part to the lookup's
        return h @ self.embedding.weight.t()
