"""A correct variant: a scaler disabled on the CPU (bfloat16 has float32's range and needs no scaling),
model.zero_grad, a hand-written MSE inside the block, keyword arguments, the loss tensor returned."""

import torch
from torch import nn


def autocast_dtype(device_type):
    if device_type == "cuda":
        return torch.float16
    return torch.bfloat16


def make_scaler(device_type):
    return torch.amp.GradScaler(device_type, enabled=device_type == "cuda")


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    model.zero_grad()
    with torch.autocast(device_type=device_type, dtype=autocast_dtype(device_type), enabled=True):
        loss = ((model(x) - y) ** 2).mean()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(parameters=model.parameters(), max_norm=max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss
