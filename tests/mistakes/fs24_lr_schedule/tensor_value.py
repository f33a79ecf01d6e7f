# Mistake: computes the multiplier with torch: it returns a 0-d tensor, which LambdaLR stores as the lr.
# Expect: not a Python float
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return torch.tensor(step / warmup_steps)
    progress = torch.tensor(min(1.0, (step - warmup_steps) / (total_steps - warmup_steps)))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + torch.cos(math.pi * progress))


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine(step, warmup_steps, total_steps, min_ratio))
