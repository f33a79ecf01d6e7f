import torch
from torch import nn
from torch.optim import Adam
from torch.optim.lr_scheduler import ReduceLROnPlateau


def accuracy(logits, targets):
    return logits.argmax(-1).eq(targets).double().mean().item()


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    weighted = []
    for data, target in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
        weighted.append((loss.item(), target.size(0)))
    count = sum(size for _, size in weighted)
    return sum(value * size for value, size in weighted) / count


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    all_logits, all_targets, summed = [], [], 0.0
    for data, target in loader:
        logits = model(data)
        summed += criterion(logits, target).item() * len(target)
        all_logits.append(logits)
        all_targets.append(target)
    targets = torch.cat(all_targets)
    return summed / len(targets), accuracy(torch.cat(all_logits), targets)


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    crit = nn.CrossEntropyLoss()
    adam = Adam(model.parameters(), lr=lr)
    sched = ReduceLROnPlateau(adam, "min", factor=0.5, patience=1)
    log = []
    winner = (float("inf"), None)
    for _ in range(epochs):
        t = train_one_epoch(model, train_loader, crit, adam)
        v, a = evaluate(model, val_loader, crit)
        sched.step(v)
        log.append({"train_loss": t, "val_loss": v, "val_acc": a})
        if v < winner[0]:
            winner = (v, {k: w.detach().clone() for k, w in model.state_dict().items()})
    return winner[1], log
