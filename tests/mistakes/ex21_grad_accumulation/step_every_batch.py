# Mistake: the usual loop: step and zero_grad after every micro-batch, so nothing accumulates.
# Expect: once every k

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y) / k
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
        if (i + 1) % k == 0:
            losses.append(total)
            total = 0.0
    return losses
