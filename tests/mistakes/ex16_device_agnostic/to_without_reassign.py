# Mistake: calls x.to(device) and y.to(device) without reassigning: Tensor.to returns a new tensor.
# Expect: returns a new tensor

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    model.to(device)
    x.to(device)
    y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps, device=device)
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
