# Mistake: steps on the shorter last group too, but still divides its losses by k instead of its own size.
# Expect: its losses were divided by k

import torch
import torch.nn.functional as F


def train_accumulated(model, optimizer, batches, k):
    losses, total = [], 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y) / k
        loss.backward()
        total += loss.item()
        if (i + 1) % k == 0 or i == len(batches) - 1:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(total)
            total = 0.0
    return losses
