# Mistake: counts steps from 1 in the lambda (step + 1): the whole schedule runs one step ahead.
# Expect: one step ahead
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine(step + 1, warmup_steps, total_steps, min_ratio))
