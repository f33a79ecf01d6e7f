"""A correct variant: an imported is_available, a device built from a string, new_zeros (which inherits the device),
non_blocking moves and a hand-written SGD update."""

import torch
import torch.nn.functional as F
from torch.cuda import is_available


def pick_device():
    return torch.device("cuda" if is_available() else "cpu")


def train(model, x, y, device, steps=20, lr=0.1):
    device = torch.device(device)
    model.to(device=device)
    x = x.to(device, non_blocking=True)
    y = y.to(device, non_blocking=True)
    losses = x.new_zeros(steps)
    for step in range(steps):
        for p in model.parameters():
            p.grad = None
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses[step] = loss.detach()
    return losses
