"""A correct variant: plain Python lists, one model call per beam, every candidate ranked with sorted()."""


def length_penalty(length, alpha):
    return ((5 + length) / 6) ** alpha  # GNMT's (Wu et al., 2016)


def beam_search(log_probs_fn, bos, eos, beam_size, max_len, alpha=1.0):
    import torch

    live = [([bos], 0.0)]
    hypotheses = []
    for step in range(max_len):
        candidates = []
        for prefix, total in live:
            row = log_probs_fn(torch.tensor([prefix], dtype=torch.long))[0].tolist()
            candidates += [(total + lp, prefix + [token]) for token, lp in enumerate(row)]
        candidates.sort(key=lambda c: c[0], reverse=True)
        live = []
        for total, prefix in candidates[: beam_size - len(hypotheses)]:
            if prefix[-1] == eos:
                hypotheses.append((prefix[1:], total / length_penalty(len(prefix) - 1, alpha)))
            else:
                live.append((prefix, total))
        if not live:
            break
    hypotheses += [(prefix[1:], total / length_penalty(len(prefix) - 1, alpha)) for prefix, total in live]
    hypotheses.sort(key=lambda h: -h[1])
    return hypotheses
