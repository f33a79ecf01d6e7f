"""Reference solution of fs24 (linear warm-up then cosine decay to a minimum, as a LambdaLR)."""

import math

import torch


def warmup_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    # The decay spans the steps after the warm-up; clamped, so that it stays at min_ratio after total_steps.
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    cosine = 0.5 * (1 + math.cos(math.pi * progress))  # half a period: from 1 down to 0, never back up
    return min_ratio + (1 - min_ratio) * cosine


def make_scheduler(optimizer, warmup_steps, total_steps, min_ratio=0.0):
    # LambdaLR multiplies each group's own initial lr by the function of its step count.
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine(step, warmup_steps, total_steps, min_ratio))
