"""A correct variant: autocast's default dtype per device, torch.GradScaler with a keyword, an imported
clip_grad_norm_, the loss computed in float32 after the block, zero_grad at the end, a float returned."""

import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


def autocast_dtype(device_type):
    return {"cpu": torch.bfloat16, "cuda": torch.float16}[device_type]


def make_scaler(device_type):
    return torch.GradScaler(device=device_type)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    with torch.amp.autocast(device_type):
        pred = model(x)
    loss = F.mse_loss(pred.float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    clip_grad_norm_(model.parameters(), max_norm=max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
