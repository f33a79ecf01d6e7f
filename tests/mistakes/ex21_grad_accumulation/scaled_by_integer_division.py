# Mistake: scales each loss by 1 // len(group), an integer division: 0 for a group of 2 or more, so every
# gradient is zero (no zero_grad is called inside the group: the zeros are not a reset).
# Expect: integer division
import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model: nn.Module, optimizer: torch.optim.Optimizer,
                      batches: list[tuple[torch.Tensor, torch.Tensor]], k: int) -> list[float]:
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]  # k micro-batches; the last group may hold fewer
        group_loss = 0.0
        for x, y in group:
            loss = F.mse_loss(model(x), y) * (1 // len(group))  # the group's scaled losses add up to its big batch's mean
            loss.backward()  # gradients add up in .grad; this micro-batch's graph is freed
            group_loss += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(group_loss)
    return losses
