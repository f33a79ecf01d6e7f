# Mistake: keeps the group's loss as a tensor (with its graph) instead of a Python float.
# Expect: take loss.item()

import torch
import torch.nn.functional as F


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        total = 0
        for x, y in group:
            loss = F.mse_loss(model(x), y) / len(group)
            loss.backward()
            total = total + loss
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total)
    return losses
