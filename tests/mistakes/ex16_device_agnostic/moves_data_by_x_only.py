# Mistake: moves the data only when x is not on the device yet, taking y along: a y elsewhere stays there.
# Expect: y was still on cpu when it was used

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    model.to(device)  # a Module moves in place
    if x.device != device:
        x, y = x.to(device), y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps, device=device)
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
