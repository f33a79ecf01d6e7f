"""Training loop, train/validation phases."""

import copy

import torch
from torch import nn


def accuracy(logits, targets):
    probabilities = torch.softmax(logits, dim=1)
    return (probabilities.argmax(dim=1) == targets).float().mean().item()


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    n_seen = 0
    loss_accumulated = 0.0
    for images, labels in iter(loader):
        prediction = model(images)
        error = criterion(prediction, labels)
        optimizer.zero_grad()
        error.backward()
        optimizer.step()
        n_seen += labels.shape[0]
        loss_accumulated += error.item() * labels.shape[0]
    return loss_accumulated / max(n_seen, 1)


def evaluate(model, loader, criterion):
    model.eval()
    n_seen, n_good, loss_accumulated = 0, 0, 0.0
    for images, labels in loader:
        with torch.no_grad():
            prediction = model(images)
            loss_accumulated += criterion(prediction, labels).item() * labels.shape[0]
        n_good += (prediction.argmax(dim=1) == labels).sum().item()
        n_seen += labels.shape[0]
    return loss_accumulated / n_seen, n_good / n_seen


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    objective = nn.CrossEntropyLoss()
    solver = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.ReduceLROnPlateau(solver, "min", factor=0.5)
    per_epoch = []
    saved = None
    for index in range(epochs):
        trn = train_one_epoch(model, train_loader, objective, solver)
        val, acc = evaluate(model, val_loader, objective)
        schedule.step(val)
        per_epoch.append({"train_loss": trn, "val_loss": val, "val_acc": acc})
        if index == 0 or val < min(e["val_loss"] for e in per_epoch[:-1]):
            saved = copy.deepcopy(model.state_dict())
    return saved, per_epoch
