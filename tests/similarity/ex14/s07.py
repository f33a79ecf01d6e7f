import copy
import torch
from torch import nn


def accuracy(logits, targets):
    _, guess = torch.max(logits, 1)
    return (guess == targets).sum().item() / float(targets.size(0))


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    epoch_loss = 0
    num = 0
    for batch_x, batch_y in loader:
        model.zero_grad()
        y_hat = model(batch_x)
        cost = criterion(y_hat, batch_y)
        cost.backward()
        optimizer.step()
        epoch_loss += cost.item() * batch_x.size(0)
        num += batch_x.size(0)
    return epoch_loss / num


def evaluate(model, loader, criterion):
    model.eval()
    epoch_loss, correct, num = 0, 0, 0
    with torch.no_grad():
        for batch_x, batch_y in loader:
            y_hat = model(batch_x)
            epoch_loss += criterion(y_hat, batch_y).item() * batch_x.size(0)
            _, guess = torch.max(y_hat, 1)
            correct += (guess == batch_y).sum().item()
            num += batch_x.size(0)
    return epoch_loss / num, correct / num


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    ce = nn.CrossEntropyLoss()
    adam = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999))
    on_plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(adam, mode="min", factor=0.1, patience=5)
    best_model_wts = copy.deepcopy(model.state_dict())
    best_val_loss = 1e18
    h = []
    for e in range(1, epochs + 1):
        tr_loss = train_one_epoch(model, train_loader, ce, adam)
        v_loss, v_acc = evaluate(model, val_loader, ce)
        on_plateau.step(v_loss)
        h.append({"train_loss": tr_loss, "val_loss": v_loss, "val_acc": v_acc})
        print(f"epoch {e}: train {tr_loss:.3f} val {v_loss:.3f} acc {v_acc:.3f}")
        if v_loss < best_val_loss:
            best_val_loss = v_loss
            best_model_wts = copy.deepcopy(model.state_dict())
    return best_model_wts, h
