# Mistake: moves each batch to a device chosen once, at import (the GPU whenever there is one), while the model stays
# where the caller put it (the CPU).
# Expect: sends tensors to it

import copy

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    return (logits.argmax(dim=1) == targets).float().mean().item()


def train_one_epoch(model, loader, criterion, optimizer) -> float:
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(DEVICE), y.to(DEVICE)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
        count += x.size(0)
    return total / count


def evaluate(model, loader, criterion) -> tuple[float, float]:
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            total += criterion(logits, y).item() * x.size(0)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += x.size(0)
    return total / count, correct / count


def fit(model, train_loader, val_loader, epochs: int, lr: float = 0.01):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
    best_loss, best_state, history = float("inf"), None, []
    for epoch in range(epochs):
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        scheduler.step(val_loss)
        if val_loss < best_loss:
            best_loss = val_loss
            best_state = copy.deepcopy(model.state_dict())
        history.append({"train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
    return best_state, history
