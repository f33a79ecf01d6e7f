"""fs36 - Speculative decoding's accept/reject step, from scratch: faster, and the same distribution.

A small draft model proposes K tokens; the large target model scores them all in one pass. Each draft
token is accepted with probability min(1, p / q); at the first rejection one token is drawn from what the
target wants beyond the draft, max(0, p - q) normalised, and the step ends; when all K are accepted, one
bonus token comes from the target's next row. The tokens that come out are distributed exactly as if the
target had sampled them alone. Run `grade fs36` to check your work.
"""

import torch


def residual_probs(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """max(0, p - q) normalised over the last dimension (each row sums to 1); p and q are [..., V]."""
    # TODO: clamp the difference at 0, then divide by its sum
    raise NotImplementedError


def speculative_step(
    target_probs: torch.Tensor,
    draft_probs: torch.Tensor,
    draft_tokens: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One step of speculative sampling: the accepted draft tokens and one more token, int64 [n + 1].

    target_probs [K + 1, V]: the target's distribution at each draft position and one after the last;
    draft_probs [K, V]: the draft's distributions, from which draft_tokens [K] (int64) were drawn.
    Draws only from `generator`.
    """
    # TODO: for each draft token: accept with probability min(1, p / q), else draw from the residual and stop;
    # all accepted: draw the bonus token from target_probs[K]
    raise NotImplementedError


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    q = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    p = torch.tensor([[0.3, 0.4, 0.3], [0.1, 0.8, 0.1], [0.5, 0.25, 0.25]])
    print(residual_probs(p[:2], q))
    print(speculative_step(p, q, torch.tensor([0, 1]), generator=g))
