"""fs35 - Beam search, from scratch: summed log-probs, finished hypotheses and a length penalty.

Greedy decoding keeps the single best token at each step; beam search keeps the beam_size best prefixes,
ranked by the sum of their tokens' log-probs, so that a token that looks worse now can lead to a better
sequence. A prefix that ends in EOS is finished; at the end a length penalty keeps short hypotheses from
winning just because they are short. Run `grade fs35` to check your work.
"""

import torch


def length_penalty(length: int, alpha: float) -> float:
    """The length penalty of a hypothesis of `length` tokens: GNMT's ((5 + length) / 6) ** alpha."""
    # TODO: the formula above
    raise NotImplementedError


def beam_search(log_probs_fn, bos: int, eos: int, beam_size: int, max_len: int, alpha: float = 1.0) -> list:
    """The beam_size hypotheses of a beam search, best first, as (tokens, score) pairs.

    log_probs_fn(prefixes): for an int64 tensor [N, T] of prefixes (bos first), the log-probs [N, V] of the
    next token. A step extends every live beam by every token (summed log-probs) and keeps the best
    beam_size - (finished so far) candidates among all of them; a kept candidate ending in eos is finished.
    After max_len steps the live beams end there. tokens: the ints after bos (eos included when finished);
    score: the summed log-prob divided by length_penalty(len(tokens), alpha).
    """
    # TODO: start from [[bos]]; step: sum, flatten, topk, split into finished and live; at the end rank by score
    raise NotImplementedError


if __name__ == "__main__":
    table = torch.log_softmax(torch.randn(6, 6, generator=torch.Generator().manual_seed(0)), dim=-1)
    for tokens, score in beam_search(lambda prefixes: table[prefixes[:, -1]], bos=0, eos=1, beam_size=3, max_len=4):
        print(tokens, round(score, 3))
