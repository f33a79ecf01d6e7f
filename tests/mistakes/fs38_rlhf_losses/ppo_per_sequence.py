# Mistake: averages each sequence over its valid tokens first, then the sequences.
# Expect: each sequence averaged first

import torch
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    chosen = policy_chosen_logps - ref_chosen_logps  # how much more the policy likes the chosen answer than the ref
    rejected = policy_rejected_logps - ref_rejected_logps
    return -F.logsigmoid(beta * (chosen - rejected)).mean()  # logsigmoid: finite for any margin


def ppo_clip_loss(logp_new, logp_old, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp_new - logp_old)  # pi_new / pi_old, from log-probs
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages
    objective = torch.minimum(unclipped, clipped)  # the pessimistic of the two
    return -((objective * mask).sum(dim=1) / mask.sum(dim=1)).mean()


def grpo_advantages(rewards, group_size, eps=1e-6):
    groups = rewards.reshape(-1, group_size)  # [num_prompts, group_size]: each prompt's answers side by side
    mean = groups.mean(dim=1, keepdim=True)
    std = groups.std(dim=1, keepdim=True)  # unbiased, as torch.std (and TRL) computes it
    return ((groups - mean) / (std + eps)).reshape(-1)
