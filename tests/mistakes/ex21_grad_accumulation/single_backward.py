# Mistake: sums the k losses and calls backward once: right numbers, but all k graphs stay in memory.
# Expect: once per micro-batch

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        total = sum(F.mse_loss(model(x), y) for x, y in group) / len(group)
        total.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total.item())
    return losses
