"""fs38 - RLHF losses, from scratch: DPO, PPO's clipped objective, GRPO's group-relative advantages.

DPO learns from preference pairs directly: it raises the policy's log-ratio (against a frozen reference)
of the chosen answer over the rejected one. PPO improves a policy with advantages, but clips the
probability ratio so that one update cannot move it far. GRPO needs no value model: it samples a group of
answers per prompt and scores each against its group's mean and std. Run `grade fs38` to check your work.
"""

import torch
import torch.nn.functional as F


def dpo_loss(
    policy_chosen_logps: torch.Tensor,
    policy_rejected_logps: torch.Tensor,
    ref_chosen_logps: torch.Tensor,
    ref_rejected_logps: torch.Tensor,
    beta: float = 0.1,
) -> torch.Tensor:
    """The DPO loss, a 0-dim tensor: the mean over the batch of
    -logsigmoid(beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected))).

    Each input is [B]: a sequence's summed log-prob under the policy or the frozen reference model.
    """
    # TODO: the two log-ratios, their difference, then a log-sigmoid that stays finite
    raise NotImplementedError


def ppo_clip_loss(
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float = 0.2,
) -> torch.Tensor:
    """PPO's clipped surrogate loss, a 0-dim tensor to minimise.

    All inputs are [B, T] per token; mask (bool) is True on the valid tokens. ratio = pi_new / pi_old;
    the objective per token is min(ratio * A, clip(ratio, 1 - clip_eps, 1 + clip_eps) * A); the loss is
    minus its mean over the valid tokens (all of them together).
    """
    # TODO: ratio from log-probs, both terms, their minimum, the masked mean, the sign
    raise NotImplementedError


def grpo_advantages(rewards: torch.Tensor, group_size: int, eps: float = 1e-6) -> torch.Tensor:
    """GRPO's advantages, [N] like rewards: (r - group mean) / (group std + eps).

    rewards [N] holds N / group_size groups one after another: the answers to one prompt are
    rewards[i * group_size : (i + 1) * group_size]. std: torch's default (unbiased).
    """
    # TODO: view the groups as rows, normalise each row
    raise NotImplementedError


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    logps = [-10 * torch.rand(4, generator=g) for _ in range(4)]
    print(dpo_loss(*logps))
    new, old = -torch.rand(2, 5, generator=g), -torch.rand(2, 5, generator=g)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    print(ppo_clip_loss(new, old, torch.randn(2, 5, generator=g), mask))
    print(grpo_advantages(torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0]), group_size=3))
