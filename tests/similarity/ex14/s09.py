import copy

import torch
import torch.nn as nn


def accuracy(logits, targets):
    return (logits.argmax(dim=1) == targets).sum().item() / len(targets)


def _step(model, criterion, optimizer, x, y):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item(), len(y)


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    results = [_step(model, criterion, optimizer, x, y) for x, y in loader]
    return sum(l * n for l, n in results) / sum(n for _, n in results)


def evaluate(model, loader, criterion):
    model.eval()
    with torch.no_grad():
        parts = [(criterion(model(x), y).item() * len(y), (model(x).argmax(dim=1) == y).sum().item(), len(y))
                 for x, y in loader]
    n = sum(p[2] for p in parts)
    return sum(p[0] for p in parts) / n, sum(p[1] for p in parts) / n


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2, min_lr=1e-5)
    history = []
    best = {"loss": float("inf"), "state": None}
    for epoch in range(epochs):
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        scheduler.step(val_loss)
        history.append({"train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
        if val_loss <= best["loss"]:
            best = {"loss": val_loss, "state": copy.deepcopy(model.state_dict())}
    return best["state"], history
