# A correct answer written differently: (1 - cos(pi * remaining)) / 2 on the remaining fraction, a named inner
# function for LambdaLR, and the clamp as max(0, ...).
import math

from torch.optim.lr_scheduler import LambdaLR


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    remaining = max(0.0, (total_steps - step) / (total_steps - warmup_steps))  # 1 after the warm-up, 0 at the end
    return min_ratio + (1 - min_ratio) * (1 - math.cos(math.pi * remaining)) / 2


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    def multiplier(step):
        return warmup_cosine(step, warmup_steps, total_steps, min_ratio)

    return LambdaLR(optimizer, multiplier)
