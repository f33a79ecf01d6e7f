# Mistake: the lambda returns an lr (the first group's base lr times the multiplier): LambdaLR multiplies again.
# Expect: returned an lr
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    base = optimizer.param_groups[0]["lr"]
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: base * warmup_cosine(step, warmup_steps, total_steps, min_ratio))
