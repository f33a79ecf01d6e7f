"""Reference solution of ex21 (gradient accumulation over k micro-batches)."""

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model: nn.Module, optimizer: torch.optim.Optimizer,
                      batches: list[tuple[torch.Tensor, torch.Tensor]], k: int) -> list[float]:
    losses = []
    group_loss = 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y) / k  # k of these add up to the big batch's mean
        loss.backward()  # gradients add up in .grad; this micro-batch's graph is freed
        group_loss += loss.item()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(group_loss)
            group_loss = 0.0
    return losses
