# Mistake: clips with the default max_norm of 1.0 instead of the max_norm given.
# Expect: the max_norm given

import torch
import torch.nn.functional as F
from torch import nn


def autocast_dtype(device_type: str) -> torch.dtype:
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    return torch.amp.GradScaler(device_type)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    optimizer.zero_grad()
    with torch.autocast(device_type, dtype=autocast_dtype(device_type)):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
