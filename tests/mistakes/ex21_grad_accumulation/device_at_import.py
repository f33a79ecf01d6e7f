# Mistake: moves each micro-batch to a device chosen at import (the GPU when there is one), not the model's.
# Expect: moved data to it

import torch
import torch.nn.functional as F
from torch import nn

DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')  # decided once, at import


def train_accumulated(model: nn.Module, optimizer: torch.optim.Optimizer,
                      batches: list[tuple[torch.Tensor, torch.Tensor]], k: int) -> list[float]:
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]  # k micro-batches; the last group may hold fewer
        group_loss = 0.0
        for x, y in group:
            x, y = x.to(DEVICE), y.to(DEVICE)  # onto the training device
            # Divide by the group's own size, not by k: a shorter last group is a smaller big batch, with its own mean.
            loss = F.mse_loss(model(x), y) / len(group)  # the group's scaled losses add up to its big batch's mean
            loss.backward()  # gradients add up in .grad; this micro-batch's graph is freed
            group_loss += loss.item()
        # One update per group, then clear: the next group's gradients must start from zero.
        optimizer.step()
        optimizer.zero_grad()
        losses.append(group_loss)
    return losses
