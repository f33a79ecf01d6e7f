# Mistake: calls scaler.update() before scaler.step(optimizer) (the unscale does come first).
# Expect: ran before `scaler.step(optimizer)`

import torch
import torch.nn.functional as F
from torch import nn


def autocast_dtype(device_type: str) -> torch.dtype:
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    return torch.amp.GradScaler(device_type)


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler,
               x: torch.Tensor, y: torch.Tensor, device_type: str, max_norm: float = 1.0):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=autocast_dtype(device_type)):
        loss = F.mse_loss(model(x), y)  # autocast runs mse_loss in float32
    scaler.scale(loss).backward()  # outside the autocast block
    scaler.unscale_(optimizer)  # true gradients, so that max_norm means what it says
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.update()
    scaler.step(optimizer)
    return loss.detach()
