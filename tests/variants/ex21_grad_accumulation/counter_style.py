"""A correct variant: a step counter, a hand-written MSE, torch.autograd.backward, model.zero_grad(),
the losses kept as detached tensors and returned as one tensor."""

import torch


def train_accumulated(model, optimizer, batches, k):
    done = 0
    running = torch.zeros(())
    out = []
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean().div(k)
        torch.autograd.backward(loss)
        running = running + loss.detach()
        done += 1
        if done == k:
            optimizer.step()
            model.zero_grad()
            out.append(running)
            running, done = torch.zeros(()), 0
    return torch.stack(out)
