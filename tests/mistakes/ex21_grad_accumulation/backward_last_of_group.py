# Mistake: runs every micro-batch forward but calls backward only on the last loss of each group, so the other
# micro-batches add nothing to .grad (no losses were summed: the message must not say so).
# Expect: (the model ran

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model, optimizer, batches, k):
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        group_loss = 0.0
        for x, y in group:
            loss = F.mse_loss(model(x), y) / len(group)
            group_loss += loss.item()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(group_loss)
    return losses
