"""A correct variant: everything in float64 then back to the input's dtype, PPO as a per-token max of the two
losses (the negation of the min of the objectives), GRPO with unbiased=True spelled out."""

import torch


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    pi = policy_chosen_logps.double() - policy_rejected_logps.double()
    ref = ref_chosen_logps.double() - ref_rejected_logps.double()
    x = beta * (pi - ref)
    loss = torch.nn.functional.logsigmoid(x).neg().mean()
    return loss.to(policy_chosen_logps.dtype)


def ppo_clip_loss(logp_new, logp_old, advantages, mask, clip_eps=0.2):
    ratio = torch.exp(logp_new.double() - logp_old.double())
    a = advantages.double()
    losses = torch.max(-ratio * a, -torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * a)
    m = mask.double()
    return ((losses * m).sum() / m.sum()).to(logp_new.dtype)


def grpo_advantages(rewards, group_size, eps=1e-6):
    g = rewards.double().view(-1, group_size)
    adv = (g - g.mean(-1, keepdim=True)) / (g.std(-1, unbiased=True, keepdim=True) + eps)
    return adv.flatten().to(rewards.dtype)
