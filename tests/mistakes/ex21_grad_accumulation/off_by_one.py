# Mistake: tests i % k == 0, so the first step comes after a single micro-batch and the last group never steps.
# Expect: (i + 1) % k == 0

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y) / k
        loss.backward()
        total += loss.item()
        if i % k == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(total)
            total = 0.0
    return losses
