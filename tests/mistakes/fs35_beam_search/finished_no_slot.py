# Mistake: keeps beam_size live beams at every step, even after some hypotheses finished, and returns the best beam_size.
# Expect: finished hypothesis keeps its slot

import torch


def length_penalty(length, alpha):
    return ((5 + length) / 6) ** alpha  # GNMT's (Wu et al., 2016)


def beam_search(log_probs_fn, bos, eos, beam_size, max_len, alpha=1.0):
    tokens = torch.tensor([[bos]])  # the live beams, [N, T]: bos, then the tokens chosen so far
    scores = torch.zeros(1, dtype=torch.float64)  # each live beam's summed log-prob
    finished = []  # (tokens after bos, summed log-prob / length penalty)
    for step in range(1, max_len + 1):
        width = beam_size
        totals = scores[:, None] + log_probs_fn(tokens).double()  # every live beam extended by every token
        best, flat = totals.flatten().topk(width)  # the best among all beams x tokens, not within each beam
        vocab = totals.shape[1]
        tokens = torch.cat([tokens[flat // vocab], (flat % vocab)[:, None]], dim=1)
        done = tokens[:, -1] == eos
        for seq, score in zip(tokens[done].tolist(), best[done].tolist()):
            finished.append((seq[1:], score / length_penalty(step, alpha)))
        tokens, scores = tokens[~done], best[~done]
        if len(finished) >= beam_size or len(tokens) == 0:
            break
    for seq, score in zip(tokens.tolist(), scores.tolist()):  # max_len reached: the live beams end there
        finished.append((seq[1:], score / length_penalty(max_len, alpha)))
    return sorted(finished, key=lambda hypothesis: hypothesis[1], reverse=True)[:beam_size]
