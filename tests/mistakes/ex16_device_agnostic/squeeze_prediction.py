# Mistake: squeezes the prediction: with one output, [N, 1] becomes [N] and the loss broadcasts it against y [N, 1].
# Expect: `.squeeze()`

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    model.to(device)
    x = x.to(device)
    y = y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps, device=device)
    for step in range(steps):
        loss = F.mse_loss(model(x).squeeze(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
