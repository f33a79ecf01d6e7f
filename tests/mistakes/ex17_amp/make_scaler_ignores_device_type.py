# Mistake: make_scaler asks torch which device exists instead of using its argument: on a GPU machine the CPU gets a CUDA scaler.
# Expect: returned a scaler for 'cuda'

import torch
import torch.nn.functional as F
from torch import nn


def autocast_dtype(device_type: str) -> torch.dtype:
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    return torch.amp.GradScaler("cuda" if torch.cuda.is_available() else "cpu")


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=autocast_dtype(device_type)):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
