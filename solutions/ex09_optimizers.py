"""Reference solution of ex09 (torch.optim optimizers and a per-epoch learning-rate scheduler)."""

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


def make_optimizer(model, kind: str, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
    # model.parameters() holds every layer's parameters. Keywords, because SGD's fourth positional parameter is
    # dampening, not weight_decay: SGD(params, lr, momentum, weight_decay) would set dampening without a word.
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    if kind == "adam":
        # Adam, not AdamW: Adam adds weight_decay to the gradient, AdamW decays the weights apart from it.
        return torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    raise ValueError(f"unknown optimizer kind {kind!r}")


def make_scheduler(optimizer, kind: str, epochs: int, step_size: int = 10, gamma: float = 0.1):
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=step_size, gamma=gamma)
    if kind == "cosine":
        # T_max counts scheduler steps: one per epoch here, so the rate reaches 0 (eta_min) after the last epoch.
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    raise ValueError(f"unknown scheduler kind {kind!r}")


def train(model, batches, epochs: int, optimizer, scheduler) -> list[float]:
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for x, y in batches:
            # Clear before backward, not between backward and step; None rather than zeros saves the memory.
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()  # a float: a sum of loss tensors would keep every batch's graph
        scheduler.step()  # once per epoch, after its optimizer steps: the whole epoch trains at its own rate
        losses.append(total / len(batches))  # the mean of the batch losses, each batch counting once
    return losses
