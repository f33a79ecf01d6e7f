# Mistake: autocasts for a device type chosen at import, not the device_type given.
# Expect: opened for 'cpu', not for 'cuda'

import torch
import torch.nn.functional as F
from torch import nn

DEVICE_TYPE = 'cuda' if torch.cuda.is_available() else 'cpu'  # decided once, at import


def autocast_dtype(device_type: str) -> torch.dtype:
    # CPUs run autocast in bfloat16; GPUs in float16, whose small range is what the scaler is for.
    return torch.float16 if device_type == "cuda" else torch.bfloat16


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    return torch.amp.GradScaler(device_type)  # torch.amp's, for the device it was given


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler,
               x: torch.Tensor, y: torch.Tensor, device_type: str, max_norm: float = 1.0):
    optimizer.zero_grad()
    # Only the forward pass and the loss run under autocast; the weights stay float32.
    with torch.autocast(device_type=DEVICE_TYPE, dtype=autocast_dtype(DEVICE_TYPE)):
        loss = F.mse_loss(model(x), y)  # autocast runs mse_loss in float32
    # A large factor keeps small float16 gradients from underflowing to 0; backward runs outside the block.
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # true gradients, so that max_norm means what it says
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # clip between unscale and step
    scaler.step(optimizer)  # skipped if the gradients hold inf/NaN
    scaler.update()  # after the step: a smaller scale after an overflow, a larger one after many good steps
    return loss.detach()  # the true loss, not the scaled one
