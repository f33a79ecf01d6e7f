# Mistake: keeps `.cuda()` for the model behind a check of the device's type: right on every device, but the
# statement asks `.to(device)` and names a `.cuda()` wherever it is.
# Expect: train calls `.cuda()`
import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    if device.type == "cuda":
        model.cuda()  # the GPU machine's line, kept for CUDA
    else:
        model.to(device)
    x = x.to(device)  # a tensor does not: .to returns a new tensor
    y = y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps, device=device)
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
