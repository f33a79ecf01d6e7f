import io

import torch
import torch.nn.functional as F


def accuracy(logits, targets):
    return torch.mean((torch.argmax(logits, dim=-1) == targets).to(torch.float32)).item()


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    stats = torch.zeros(2, dtype=torch.float64)
    for x, y in loader:
        for p in model.parameters():
            p.grad = None
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        stats += torch.tensor([loss.item() * y.numel(), y.numel()], dtype=torch.float64)
    return (stats[0] / stats[1]).item()


def evaluate(model, loader, criterion):
    model.eval()
    stats = torch.zeros(3, dtype=torch.float64)
    with torch.inference_mode():
        for x, y in loader:
            out = model(x)
            hits = (out.argmax(-1) == y).sum().item()
            stats += torch.tensor([criterion(out, y).item() * y.numel(), hits, y.numel()], dtype=torch.float64)
    return (stats[0] / stats[2]).item(), (stats[1] / stats[2]).item()


def snapshot(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def fit(model, train_loader, val_loader, epochs, lr=0.01):
    opt = torch.optim.Adam(model.parameters(), lr)
    sch = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, "min", 0.5, 2)
    hist, best = [], None
    for _ in range(epochs):
        entry = dict(train_loss=train_one_epoch(model, train_loader, F.cross_entropy, opt))
        entry["val_loss"], entry["val_acc"] = evaluate(model, val_loader, F.cross_entropy)
        sch.step(entry["val_loss"])
        if not hist or entry["val_loss"] < min(h["val_loss"] for h in hist):
            best = snapshot(model)
        hist.append(entry)
    return best, hist
