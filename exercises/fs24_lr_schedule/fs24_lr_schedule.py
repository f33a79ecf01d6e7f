"""fs24 - A learning-rate schedule: linear warm-up, then cosine decay to a minimum, as a LambdaLR.

Large models train with a schedule: the learning rate ramps up linearly for warmup_steps (large early updates from a
random start would blow the weights up), then decays along half a cosine to min_ratio times the base rate at
total_steps, and stays there. warmup_cosine(step, ...) is the multiplier of the base rate at a step, as
torch.optim.lr_scheduler.LambdaLR wants it; during the warm-up it is step / warmup_steps.

Run `grade fs24` to check your work.
"""

import math

import torch


def warmup_cosine(step: int, warmup_steps: int, total_steps: int, min_ratio: float = 0.0) -> float:
    """The multiplier of the base learning rate at `step` (0, 1, 2, ...), a Python float.

    step < warmup_steps: step / warmup_steps; then 1 down to min_ratio along half a cosine, reached at total_steps;
    min_ratio after that. warmup_steps may be 0 (no warm-up); total_steps > warmup_steps.
    """
    # TODO
    raise NotImplementedError


def make_scheduler(optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int,
                   min_ratio: float = 0.0) -> torch.optim.lr_scheduler.LRScheduler:
    """A torch.optim.lr_scheduler.LambdaLR that sets each param group's lr to its base lr times warmup_cosine(step)."""
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    print([round(warmup_cosine(s, 3, 10, 0.1), 3) for s in range(12)])  # up, then down to 0.1, then flat
