# Mistake: returns every micro-batch's loss instead of one big-batch loss per optimizer step.
# Expect: One loss per micro-batch?

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        for x, y in group:
            loss = F.mse_loss(model(x), y)
            (loss / len(group)).backward()
            losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad()
    return losses
