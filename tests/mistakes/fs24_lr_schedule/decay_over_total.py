# Mistake: the cosine's progress as step / total_steps, as if the decay started at step 0.
# Expect: progress counts from step 0
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, step / total_steps)
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine(step, warmup_steps, total_steps, min_ratio))
