"""Reference solution of ex14 (the full training loop: train/validation phases, scheduler, best model)."""

import copy

import torch
from torch import nn


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    # The predicted class is the largest score along the classes (dim=1); the mean of right/wrong is a fraction.
    return (logits.argmax(dim=1) == targets).float().mean().item()


def train_one_epoch(model, loader, criterion, optimizer) -> float:
    model.train()  # evaluate() left the model in eval mode: Dropout and BatchNorm must train again
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # raw logits: CrossEntropyLoss applies log_softmax itself
        loss.backward()
        optimizer.step()
        # The loss is a mean over the batch: weigh it by the batch size, so that a short last batch counts
        # for its samples only. .item(): a float, not a tensor that keeps the batch's graph.
        total += loss.item() * x.size(0)
        count += x.size(0)
    return total / count


def evaluate(model, loader, criterion) -> tuple[float, float]:
    model.eval()  # Dropout off, BatchNorm on its running statistics
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():  # nothing will be backpropagated: no graph, less memory
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
        scheduler.step(val_loss)  # ReduceLROnPlateau watches the validation loss, once per epoch
        if val_loss < best_loss:  # the best epoch by validation loss, the quantity the scheduler watches too
            best_loss = val_loss
            # A deep copy: state_dict() holds the live tensors, which the next epochs keep changing.
            best_state = copy.deepcopy(model.state_dict())
        history.append({"train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
    return best_state, history
