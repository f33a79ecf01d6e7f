# Mistake: picks Apple's MPS device first when there is one: the statement asks for CUDA when available,
# the CPU otherwise.
# Expect: returned mps
import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    if torch.backends.mps.is_available():  # "the best accelerator there is": Apple's GPU first
        return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    model.to(device)  # a Module moves in place
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
