"""My ex14."""
import torch
import torch.nn as nn
import torch.optim as optim


def accuracy(logits, targets):
    correct = torch.sum(torch.argmax(logits, 1) == targets)
    return float(correct) / targets.shape[0]


def train_one_epoch(model, loader, criterion, optimizer):
    model.train(True)
    losses = []
    sizes = []
    for batch in loader:
        x, y = batch
        pred = model(x)
        l = criterion(pred, y)
        optimizer.zero_grad()
        l.backward()
        optimizer.step()
        losses.append(l.item())
        sizes.append(x.shape[0])
    return sum(a * b for a, b in zip(losses, sizes)) / sum(sizes)


def evaluate(model, loader, criterion):
    model.train(False)
    loss_sum = 0.0
    right = 0
    total = 0
    for x, y in loader:
        with torch.no_grad():
            pred = model(x)
        loss_sum = loss_sum + criterion(pred, y).item() * x.shape[0]
        right = right + int((torch.argmax(pred, 1) == y).sum())
        total = total + x.shape[0]
    return loss_sum / total, right / total


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=lr)
    plateau = optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", patience=3)
    hist = []
    best = None
    best_val = None
    for i in range(epochs):
        tl = train_one_epoch(model, train_loader, loss_fn, opt)
        vl, va = evaluate(model, val_loader, loss_fn)
        plateau.step(vl)
        hist.append(dict(train_loss=tl, val_loss=vl, val_acc=va))
        if best_val is None or vl < best_val:
            best_val = vl
            best = {name: t.clone() for name, t in model.state_dict().items()}
    return best, hist
