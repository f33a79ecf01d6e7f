# Mistake: returns cuda:0, pinning the first GPU, where the statement asks for the current CUDA device.
# Expect: An index pins one GPU

import torch
import torch.nn.functional as F
from torch import nn


def pick_device() -> torch.device:
    # Call is_available(): the function object itself is always true. Picked once, then passed around.
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device,
          steps: int = 20, lr: float = 0.1) -> torch.Tensor:
    # Every device below comes from the argument, never a hard-coded "cuda" or "cpu".
    model.to(device)  # a Module moves in place
    x = x.to(device)  # a tensor does not: .to returns a new tensor
    y = y.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = torch.zeros(steps, device=device)  # made on the device directly, not made on the CPU then copied
    for step in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # Stays on the device: .item() here would wait for the GPU to finish at every step.
        losses[step] = loss.detach()
    return losses
