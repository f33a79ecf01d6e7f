"""A correct variant: clipping written out by hand on the unscaled gradients (scale them down when their
total norm exceeds max_norm), torch.amp.autocast with positional arguments."""

import torch
from torch import nn


def autocast_dtype(device_type):
    return {"cuda": torch.float16}.get(device_type, torch.bfloat16)


def make_scaler(device_type):
    return torch.amp.GradScaler(device_type)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    for p in model.parameters():
        p.grad = None
    with torch.amp.autocast(device_type, autocast_dtype(device_type)):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    with torch.no_grad():
        grads = [p.grad for p in model.parameters()]
        norm = torch.sqrt(sum((g.float() ** 2).sum() for g in grads))
        if norm > max_norm:
            for g in grads:
                g.mul_(max_norm / norm)
    scaler.step(optimizer)
    scaler.update()
    return float(loss)
