from dataclasses import dataclass, asdict

import torch
from torch import nn


@dataclass
class EpochStats:
    train_loss: float
    val_loss: float
    val_acc: float


def accuracy(logits, targets):
    return float((logits.argmax(axis=1) == targets).sum() / targets.shape[0])


class Meter:
    def __init__(self):
        self.loss = 0.0
        self.correct = 0
        self.count = 0

    def add(self, logits, targets, loss):
        k = len(targets)
        self.loss += loss * k
        self.correct += int((logits.argmax(axis=1) == targets).sum())
        self.count += k

    def mean_loss(self):
        return self.loss / self.count


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    meter = Meter()
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        meter.add(logits.detach(), y, loss.item())
    return meter.mean_loss()


def evaluate(model, loader, criterion):
    model.eval()
    meter = Meter()
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            meter.add(logits, y, criterion(logits, y).item())
    return meter.mean_loss(), meter.correct / meter.count


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    criterion = nn.CrossEntropyLoss(reduction="mean")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", threshold=1e-3)
    stats = []
    best = None
    for _ in range(epochs):
        tl = train_one_epoch(model, train_loader, criterion, optimizer)
        vl, va = evaluate(model, val_loader, criterion)
        scheduler.step(vl)
        stats.append(EpochStats(tl, vl, va))
        if min(s.val_loss for s in stats) == vl:
            best = {key: value.clone() for key, value in model.state_dict().items()}
    return best, [asdict(s) for s in stats]
