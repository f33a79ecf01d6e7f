import copy

import torch
from torch import nn


def accuracy(logits, targets):
    predicted = logits.argmax(dim=1)
    return (predicted == targets).float().mean().item()


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    running, seen = 0.0, 0
    for inputs, labels in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(labels)
        seen += len(labels)
    return running / seen


def evaluate(model, loader, criterion):
    model.eval()
    running, hits, seen = 0.0, 0, 0
    with torch.no_grad():
        for inputs, labels in loader:
            outputs = model(inputs)
            running += criterion(outputs, labels).item() * len(labels)
            hits += (outputs.argmax(dim=1) == labels).sum().item()
            seen += len(labels)
    return running / seen, hits / seen


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    history = []
    best_state, lowest = None, float("inf")
    for epoch in range(epochs):
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        scheduler.step(val_loss)
        history.append({"train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
        if val_loss < lowest:
            lowest = val_loss
            best_state = copy.deepcopy(model.state_dict())
    return best_state, history
