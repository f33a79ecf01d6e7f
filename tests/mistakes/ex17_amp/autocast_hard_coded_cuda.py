# Mistake: opens autocast for "cuda" whatever the device: on the CPU PyTorch disables it, all runs in float32.
# Expect: opened for 'cuda'

import torch
import torch.nn.functional as F
from torch import nn


def autocast_dtype(device_type: str) -> torch.dtype:
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    return torch.amp.GradScaler(device_type)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    optimizer.zero_grad()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
