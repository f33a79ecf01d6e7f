"""A correct variant: the autocast device type read off the input tensor (x.device.type), the dtype from
autocast_dtype, the optimizer zeroed through the model, clip_grad_norm_ with keyword arguments."""

import torch
import torch.nn.functional as F


def autocast_dtype(device_type):
    return torch.float16 if device_type.startswith("cuda") else torch.bfloat16


def make_scaler(device_type):
    return torch.amp.GradScaler(device_type)


def train_step(model, optimizer, scaler, x, y, device_type, max_norm=1.0):
    model.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(device_type)):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(parameters=model.parameters(), max_norm=max_norm, norm_type=2.0)
    scaler.step(optimizer)
    scaler.update()
    return loss.float()
