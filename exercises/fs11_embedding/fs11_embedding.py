"""fs11 - An embedding from scratch, and a language model with tied weights.

An embedding is a table of vectors, one row per token id, that the model learns. Looking ids up is indexing, and
autograd sends each lookup's gradient back to its row. padding_idx names the id of the padding token: its row starts
at zeros and its lookups send no gradient back, so it never trains.

A language model scores the next token with a head of the same size as the table, [vocab, dim]; tying the two (the
head uses the embedding's weight itself) halves the parameters, and the shared weight learns from both uses.

Do not use nn.Embedding or F.embedding. Run `grade fs11` to check your work.
"""

import torch
from torch import nn


class Embedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None):
        """weight: an nn.Parameter [num_embeddings, embedding_dim] drawn from N(0, 1), as nn.Embedding's; the row
        padding_idx (a negative one counts from the end) starts at zeros."""
        super().__init__()
        # TODO
        raise NotImplementedError

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids: an int64 tensor of any shape (a single 0-dim id, an empty one). Returns [*ids.shape, embedding_dim],
        the rows of weight, the padding row as it is; the lookups of padding_idx send no gradient to weight."""
        # TODO
        raise NotImplementedError


class TiedLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int, padding_idx: int | None = None):
        """self.embedding = Embedding(vocab_size, dim, padding_idx) and self.proj = nn.Linear(dim, dim); the output
        head has no weight of its own: it uses self.embedding.weight (the same Parameter), and no bias."""
        super().__init__()
        # TODO
        raise NotImplementedError

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """The logits [*ids.shape, vocab_size] = tanh(proj(embedding(ids))) @ embedding.weight.T:
        the embeddings go into proj as they are."""
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    model = TiedLM(10, 4, padding_idx=0)
    logits = model(torch.tensor([[1, 2, 0, 2]]))
    print(logits.shape, sum(p.numel() for p in model.parameters()), "parameters, expected", 10 * 4 + 4 * 4 + 4)
