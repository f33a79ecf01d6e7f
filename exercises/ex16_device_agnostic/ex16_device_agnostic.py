"""ex16 - Device-agnostic code: one training loop for the CPU and the GPU.

This code was written on a machine with a GPU and only runs there: it hard-codes `.cuda()`.
On a laptop without CUDA it stops with "Torch not compiled with CUDA enabled".

Fix it so that it runs on whatever device it is given:
- pick the device once (pick_device), and pass it around;
- move the model with model.to(device), and the data with x = x.to(device) (reassign it!);
- create new tensors directly on the device: torch.zeros(..., device=device).

Run `grade ex16` to check your work (and `grade ex16 --device cuda` on a machine with a GPU).
"""

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    """Return torch.device("cuda") when CUDA is available, else torch.device("cpu")."""
    # TODO: fix me, this only works on a machine with a GPU.
    return torch.device("cuda")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    """Train `model` in place on (x, y), on `device`: full-batch SGD on the mean squared error.

    x: [N, in_features], y: [N, out_features], both possibly on another device than `device`.
    Returns the loss before each update as a 1-D tensor of length `steps`, on `device`.
    """
    # TODO: fix me, every `.cuda()` below ignores `device`.
    model.cuda()
    x = x.cuda()
    y = y.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps).cuda()
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses


if __name__ == "__main__":
    device = pick_device()
    print("device:", device)
    x = torch.randn(64, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    model = nn.Linear(3, 1)
    losses = train(model, x, y, device)
    print("losses:", losses.cpu())
