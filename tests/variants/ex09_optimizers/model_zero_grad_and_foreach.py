"""A correct variant: gradients cleared through the model (model.zero_grad(), set_to_none by default),
an optimizer built with foreach=True (how it computes, not what), keyword-only construction through a
dict of settings, and the epoch's mean taken with statistics.fmean."""

import statistics

import torch
import torch.nn.functional as F


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
    settings = {"lr": lr, "weight_decay": weight_decay, "foreach": True}
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), momentum=momentum, **settings)
    return torch.optim.Adam(model.parameters(), **settings)


def make_scheduler(optimizer, kind, epochs, step_size=10, gamma=0.1):
    schedulers = torch.optim.lr_scheduler
    if kind == "step":
        return schedulers.StepLR(optimizer, gamma=gamma, step_size=step_size)
    return schedulers.CosineAnnealingLR(optimizer, T_max=epochs, eta_min=0)


def train(model, batches, epochs, optimizer, scheduler):
    per_epoch = []
    for _ in range(epochs):
        batch_losses = []
        for x, y in batches:
            model.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            batch_losses.append(loss.item())
        scheduler.step()
        per_epoch.append(statistics.fmean(batch_losses))
    return per_epoch
