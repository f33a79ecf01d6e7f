# Mistake: no clamp on the progress: after total_steps the cosine goes on and the lr rises again.
# Expect: rises again
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine(step, warmup_steps, total_steps, min_ratio))
