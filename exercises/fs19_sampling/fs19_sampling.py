"""fs19 - Sampling the next token: temperature, top-k and top-p (nucleus), from scratch.

A language model gives logits over the vocabulary; decoding draws the next token from a distribution
made of them. Temperature sharpens or flattens it, top-k keeps the k most likely tokens, top-p keeps
the smallest set of most likely tokens whose probability reaches p; what is left is renormalised.
The draw uses the torch.Generator it is given, so a seed reproduces it. Run `grade fs19` to check your work.
"""

import torch


def sampling_probs(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    """The distribution to sample from, [B, V] (rows sum to 1, zeros outside the kept tokens), for logits [B, V].

    temperature: divide the logits by it first; top-k and top-p then see the tempered distribution.
    top_k: keep the tokens whose logit is at least the k-th largest of the row (ties with it kept too).
    top_p: keep a token when the tokens more probable than it hold less than top_p in total (so the token
    that crosses top_p is kept, and the most probable token always is); top-p comes after top-k and uses
    its renormalised probabilities. None: no filter.
    """
    # TODO: temperature, top-k (-inf below the k-th logit), top-p (sort, cumulative sums), then softmax
    raise NotImplementedError


def sample(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row of logits [B, V], drawn from sampling_probs(...) with `generator`: int64 [B]."""
    # TODO: draw with torch.multinomial and the generator
    raise NotImplementedError


if __name__ == "__main__":
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0, -3.0]])
    print(sampling_probs(logits, temperature=0.7, top_k=3, top_p=0.9))
    print(sample(logits, top_k=3, generator=torch.Generator().manual_seed(0)))
