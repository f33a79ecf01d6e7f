# Mistake: returns every micro-batch's loss instead of one big-batch loss per optimizer step.
# Expect: One loss per micro-batch?

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        (loss / k).backward()
        losses.append(loss.item())
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
    return losses
