# Mistake: divides each loss by the number of all micro-batches instead of k.
# Expect: not by the number of all micro-batches

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y) / len(batches)
        loss.backward()
        total += F.mse_loss(model(x), y).item() / k
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(total)
            total = 0.0
    return losses
