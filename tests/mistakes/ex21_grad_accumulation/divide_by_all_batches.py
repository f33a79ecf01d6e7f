# Mistake: divides each loss by the number of all micro-batches instead of k.
# Expect: divided by the number of all micro-batches

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
            (loss / len(batches)).backward()
            total += loss.item() / len(group)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total)
    return losses
