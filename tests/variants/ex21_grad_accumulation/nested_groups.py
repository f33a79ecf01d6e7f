"""A correct variant: a loop over groups, zero_grad(set_to_none=True) before each group, the loss multiplied
by 1/(the group's size), the group's loss as the mean of its micro-batch losses."""

import torch.nn.functional as F


def train_accumulated(model, optimizer, batches, k):
    history = []
    for start in range(0, len(batches), k):
        optimizer.zero_grad(set_to_none=True)
        micro_losses = []
        group = batches[start:start + k]
        for x, y in group:
            loss = F.mse_loss(model(x), y)
            (loss * (1.0 / len(group))).backward()
            micro_losses.append(loss.item())
        optimizer.step()
        history.append(sum(micro_losses) / len(micro_losses))
    return history
