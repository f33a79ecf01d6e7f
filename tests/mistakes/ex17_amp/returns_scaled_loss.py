# Mistake: returns the scaled loss, which is the loss times the scale factor (65536 at first).
# Expect: not `scaler.scale(loss)`

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
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return scaled.item()
