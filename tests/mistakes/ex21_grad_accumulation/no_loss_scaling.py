# Mistake: backward on each micro-batch loss without dividing by k: the update is k times too large.
# Expect: must be divided by the number of micro-batches in its group

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        total = 0.0
        for x, y in group:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            total += loss.item() / len(group)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total)
    return losses
