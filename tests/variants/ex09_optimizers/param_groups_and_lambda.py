"""A correct variant: a dict param group, positional hyperparameters, LambdaLR schedules with the same
learning rates as StepLR and CosineAnnealingLR, plain zero_grad() (set_to_none is its default) placed
after step, and the epoch's losses averaged with torch."""

import math

import torch
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR


def train_by_hand(model, batches, epochs, lr):
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
                    p.grad.zero_()


def make_optimizer(model, kind, lr, momentum=0.0, weight_decay=0.0):
    groups = [{"params": list(model.parameters())}]
    if kind == "adam":
        return torch.optim.Adam(groups, lr, weight_decay=weight_decay)
    return torch.optim.SGD(groups, lr, momentum, weight_decay=weight_decay)


def make_scheduler(optimizer, kind, epochs, step_size=10, gamma=0.1):
    if kind == "step":
        return LambdaLR(optimizer, lambda epoch: gamma ** (epoch // step_size))
    return LambdaLR(optimizer, lambda epoch: 0.5 * (1 + math.cos(math.pi * epoch / epochs)))


def train(model, batches, epochs, optimizer, scheduler):
    history = []
    for _ in range(epochs):
        batch_losses = []
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            batch_losses.append(loss.detach())
        scheduler.step()
        history.append(torch.stack(batch_losses).mean().item())
    return history
