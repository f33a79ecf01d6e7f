"""A correct variant: the clipping done with torch.nn.utils.get_total_norm and clip_grads_with_norm_ (the norm
kept for logging), the data moved to the device type first, a GPU-only flag, and the loss as a 0-d tensor."""

import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grads_with_norm_, get_total_norm


def autocast_dtype(device_type):
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type):
    return torch.amp.GradScaler(device=device_type, init_scale=2.0**16, enabled=True)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    x = x.to(device_type, non_blocking=device_type == "cuda")
    y = y.to(device_type, non_blocking=device_type == "cuda")
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device_type, dtype=autocast_dtype(device_type), cache_enabled=True):
        prediction = model(x)
        loss = F.mse_loss(prediction, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = get_total_norm(grads)
    clip_grads_with_norm_(model.parameters(), max_norm, total)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()
