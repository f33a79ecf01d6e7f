"""A correct variant: DPO through softplus (-logsigmoid(x) = softplus(-x)), PPO's min written with torch.where on
the advantage's sign and a boolean-indexed mean, GRPO with var and sqrt."""

import torch
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    logits = (policy_chosen_logps - policy_rejected_logps) - (ref_chosen_logps - ref_rejected_logps)
    return F.softplus(-beta * logits).sum() / logits.numel()


def ppo_clip_loss(logp_new, logp_old, advantages, mask, clip_eps=0.2):
    ratio = (logp_new - logp_old).exp()
    # A >= 0: the ratio is capped above at 1 + eps; A < 0: below at 1 - eps
    capped = torch.where(advantages >= 0, ratio.clamp(max=1 + clip_eps), ratio.clamp(min=1 - clip_eps))
    per_token = -(capped * advantages)
    return per_token[mask.bool()].mean()


def grpo_advantages(rewards, group_size, eps=1e-6):
    out = torch.empty_like(rewards)
    for start in range(0, rewards.numel(), group_size):
        g = rewards[start:start + group_size]
        std = torch.sqrt(((g - g.mean()) ** 2).sum() / (group_size - 1))
        out[start:start + group_size] = (g - g.mean()) / (std + eps)
    return out
