# Mistake: draws r with torch.rand without the generator.
# Expect: global random generator

import torch


def residual_probs(p, q):
    excess = (p - q).clamp(min=0)  # where the target wants more than the draft gave
    return excess / excess.sum(dim=-1, keepdim=True)


def speculative_step(target_probs, draft_probs, draft_tokens, generator=None):
    out = []
    for i, token in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i, token], draft_probs[i, token]
        r = torch.rand((), dtype=torch.float64)
        if r * q < p:  # r < p / q: accepted with probability min(1, p / q)
            out.append(token)
            continue
        # rejected: one token from what the target wants beyond the draft, and the step ends
        fix = torch.multinomial(residual_probs(target_probs[i], draft_probs[i]), 1, generator=generator)
        return torch.tensor(out + [int(fix)])
    bonus = torch.multinomial(target_probs[-1], 1, generator=generator)  # every draft accepted: one more from p
    return torch.tensor(out + [int(bonus)])
