"""A correct variant: a step counter, a hand-written MSE, torch.autograd.backward, model.zero_grad(),
the running loss kept as a detached tensor and turned into a float once per step."""

import torch


def train_accumulated(model, optimizer, batches, k):
    done = 0
    running = torch.zeros(())
    out = []
    for i, (x, y) in enumerate(batches):
        group_size = min(k, len(batches) - (i - done))  # the last group may be shorter than k
        loss = ((model(x) - y) ** 2).mean().div(group_size)
        torch.autograd.backward(loss)
        running = running + loss.detach()
        done += 1
        if done == group_size:
            optimizer.step()
            model.zero_grad()
            out.append(running.item())
            running, done = torch.zeros(()), 0
    return out
