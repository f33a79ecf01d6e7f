# Mistake: keeps the GPU version behind `if torch.cuda.is_available():`, so train ignores its device argument
# wherever a GPU exists (a CPU grader never runs that branch unless CUDA is pretended).
# Expect: sent the model to CUDA

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    if torch.cuda.is_available():
        model.cuda()
        x, y = x.cuda(), y.cuda()
        losses = torch.zeros(steps).cuda()
    else:
        model.to(device)
        x, y = x.to(device), y.to(device)
        losses = torch.zeros(steps, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    return losses
