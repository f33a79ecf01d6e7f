# Mistake: uses the deprecated torch.cuda.amp API of older tutorials: its autocast only covers CUDA.
# Expect: deprecated

import torch
import torch.nn.functional as F
from torch import nn
from torch.cuda.amp import GradScaler, autocast


def autocast_dtype(device_type: str) -> torch.dtype:
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str):
    return GradScaler()


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    optimizer.zero_grad()
    with autocast():
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
