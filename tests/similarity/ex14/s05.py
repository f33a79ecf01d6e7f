# ex14 -- training loop with validation
from copy import deepcopy

import torch
from torch import nn


def accuracy(logits, targets):
    good = 0
    for row, label in zip(logits, targets):
        if int(row.argmax()) == int(label):
            good += 1
    return good / len(targets)


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    total_loss = 0.0
    total_samples = 0
    for step, (features, classes) in enumerate(loader):
        optimizer.zero_grad()
        logits = model(features)
        batch_loss = criterion(logits, classes)
        batch_loss.backward()
        optimizer.step()
        n = classes.shape[0]
        total_loss += float(batch_loss) * n
        total_samples += n
    return total_loss / total_samples


def evaluate(model, loader, criterion):
    was_training = model.training
    model.eval()
    total_loss, total_correct, total_samples = 0.0, 0, 0
    with torch.no_grad():
        for features, classes in loader:
            logits = model(features)
            n = classes.shape[0]
            total_loss += float(criterion(logits, classes)) * n
            total_correct += int((logits.argmax(dim=1) == classes).sum())
            total_samples += n
    model.train(was_training)
    return total_loss / total_samples, total_correct / total_samples


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    loss_function = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(params=model.parameters(), lr=lr)
    reducer = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer=optimizer, mode="min")
    results = []
    best_weights = deepcopy(model.state_dict())
    best_loss = None
    epoch = 0
    while epoch < epochs:
        tr = train_one_epoch(model, train_loader, loss_function, optimizer)
        vl, va = evaluate(model, val_loader, loss_function)
        reducer.step(vl)
        results.append({"train_loss": tr, "val_loss": vl, "val_acc": va})
        if best_loss is None or vl < best_loss:
            best_loss = vl
            best_weights = deepcopy(model.state_dict())
        epoch += 1
    return best_weights, results
