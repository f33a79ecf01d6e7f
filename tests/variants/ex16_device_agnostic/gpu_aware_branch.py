"""A correct variant with a GPU branch of its own: torch.accelerator picks the device, and train pins and
moves the data without blocking and turns on cuDNN's autotuner only when the device it is given is CUDA."""

import torch
import torch.nn.functional as F


def pick_device() -> torch.device:
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    if accelerator is not None and accelerator.type == "cuda":
        return accelerator
    return torch.device("cpu")


def train(model, x, y, device, steps=20, lr=0.1):
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.backends.cudnn.benchmark = True
        x, y = x.pin_memory(), y.pin_memory()
    model.to(device)
    x = x.to(device, non_blocking=on_gpu)
    y = y.to(device, non_blocking=on_gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.empty(steps, device=device)
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
