# Mistake: returns only the accepted tokens when every draft token is accepted: no bonus token.
# Expect: one more token is drawn from the last target row

import torch


def residual_probs(p, q):
    excess = (p - q).clamp(min=0)  # where the target wants more than the draft gave
    return excess / excess.sum(dim=-1, keepdim=True)


def speculative_step(target_probs, draft_probs, draft_tokens, generator=None):
    out = []
    for i, token in enumerate(draft_tokens.tolist()):
        p, q = target_probs[i, token], draft_probs[i, token]
        r = torch.rand((), dtype=torch.float64, generator=generator)
        if r * q < p:  # r < p / q: accepted with probability min(1, p / q)
            out.append(token)
            continue
        # rejected: one token from what the target wants beyond the draft, and the step ends
        fix = torch.multinomial(residual_probs(target_probs[i], draft_probs[i]), 1, generator=generator)
        return torch.tensor(out + [int(fix)])
    return torch.tensor(out)
