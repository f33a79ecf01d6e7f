# Mistake: keeps the habit of zero_grad() at the top of every iteration, throwing away the accumulation.
# Expect: throws away

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y) / k
        loss.backward()
        total += loss.item()
        if (i + 1) % k == 0:
            optimizer.step()
            losses.append(total)
            total = 0.0
    return losses
