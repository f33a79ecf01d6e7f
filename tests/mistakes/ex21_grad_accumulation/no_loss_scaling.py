# Mistake: backward on each micro-batch loss without dividing by k: the update is k times too large.
# Expect: must be divided by k

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        total += loss.item() / k
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(total)
            total = 0.0
    return losses
