# Mistake: steps every k micro-batches but never resets the gradients, so each update mixes in the old ones.
# Expect: optimizer.zero_grad()

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        total = 0.0
        for x, y in group:
            loss = F.mse_loss(model(x), y) / len(group)
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses
