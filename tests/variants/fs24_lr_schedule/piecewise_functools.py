# A correct answer written differently: the decay as a cosine annealing formula from the minimum, the scheduler's
# function bound with functools.partial.
import functools
import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if warmup_steps > 0 and step < warmup_steps:
        return float(step / warmup_steps)
    if step >= total_steps:
        return float(min_ratio)
    t = (step - warmup_steps) / (total_steps - warmup_steps)
    return float(min_ratio + (1.0 - min_ratio) * (math.cos(math.pi * t) + 1.0) / 2.0)


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    schedule = functools.partial(warmup_cosine, warmup_steps=warmup_steps, total_steps=total_steps,
                                 min_ratio=min_ratio)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
