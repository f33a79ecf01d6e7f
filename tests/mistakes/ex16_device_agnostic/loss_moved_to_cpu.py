# Mistake: moves each loss to the CPU before storing it (`.cpu()`): the losses tensor is on the device, the
# stored loss is not. Only the losses check should fail: the model and the data were moved.
# Expect: moved a tensor to cpu
import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
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
        losses[step] = loss.detach().cpu()
    return losses
