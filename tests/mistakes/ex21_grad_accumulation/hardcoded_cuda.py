# Mistake: moves each micro-batch to the GPU whenever there is one, wherever the model is.
# Expect: Use the model's device

import torch
import torch.nn.functional as F


def train_accumulated(model, optimizer, batches, k):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    losses = []
    for start in range(0, len(batches), k):
        group = batches[start:start + k]
        total = 0.0
        for x, y in group:
            x, y = x.to(device), y.to(device)
            loss = F.mse_loss(model(x), y) / len(group)
            loss.backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total)
    return losses
