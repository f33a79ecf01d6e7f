import copy
import math

import torch
from torch import nn


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    n_right = (logits.max(dim=1).indices == targets).count_nonzero().item()
    return n_right / targets.numel()


def run_batches(model, loader, criterion, optimizer=None):
    """Shared loop: trains when an optimizer is given, else only measures."""
    loss_total, n_right, n_items = 0.0, 0, 0
    for xb, yb in loader:
        scores = model(xb)
        batch_loss = criterion(scores, yb)
        if optimizer is not None:
            optimizer.zero_grad()
            batch_loss.backward()
            optimizer.step()
        loss_total += batch_loss.item() * yb.numel()
        n_right += (scores.argmax(1) == yb).sum().item()
        n_items += yb.numel()
    return loss_total / n_items, n_right / n_items


def train_one_epoch(model, loader, criterion, optimizer) -> float:
    model.train()
    mean_loss, _ = run_batches(model, loader, criterion, optimizer)
    return mean_loss


def evaluate(model, loader, criterion):
    model.eval()
    with torch.no_grad():
        return run_batches(model, loader, criterion)


def fit(model, train_loader, val_loader, epochs: int, lr: float = 0.01):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.3)
    record, keep, best_seen = [], None, math.inf
    for _ in range(epochs):
        row = {"train_loss": train_one_epoch(model, train_loader, criterion, optimizer)}
        row["val_loss"], row["val_acc"] = evaluate(model, val_loader, criterion)
        scheduler.step(row["val_loss"])
        record.append(row)
        if row["val_loss"] < best_seen:
            best_seen, keep = row["val_loss"], copy.deepcopy(model.state_dict())
    return keep, record
