"""A correct variant: float32 scores, the finished beams masked with -inf rather than removed, a fixed [beam_size, T]
tensor of beams, and the hypotheses returned as tensors of tokens with tensor scores."""

import math

import torch


def length_penalty(length, alpha):
    penalty = ((5 + length) / 6) ** alpha  # GNMT's (Wu et al., 2016)
    return float(penalty)


def beam_search(log_probs_fn, bos, eos, beam_size, max_len, alpha=1.0):
    beams = torch.full((1, 1), bos, dtype=torch.long)
    sums = torch.zeros(1)
    out = []
    step = 0
    while step < max_len and len(beams) > 0:
        step += 1
        cand = (sums.unsqueeze(1) + log_probs_fn(beams)).reshape(-1)
        vocab = cand.numel() // len(beams)
        values, index = torch.sort(cand, descending=True)
        values, index = values[: beam_size - len(out)], index[: beam_size - len(out)]
        beams = torch.cat([beams[index.div(vocab, rounding_mode="floor")], index.remainder(vocab).unsqueeze(1)], 1)
        ended = beams[:, -1].eq(eos)
        out += [(b[1:], v / length_penalty(step, alpha)) for b, v in zip(beams[ended], values[ended])]
        keep = ~ended
        beams, sums = beams[keep], values.masked_fill(~keep, -math.inf)[keep]
    out += [(b[1:], v / length_penalty(max_len, alpha)) for b, v in zip(beams, sums)]
    return sorted(out, key=lambda h: float(h[1]), reverse=True)
