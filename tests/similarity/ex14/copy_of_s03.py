import copy
import math

import torch
from torch import nn


def fit(net, loader_train, loader_val, n_epochs: int, lr: float = 0.01):
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.3)
    log, kept, lowest = [], None, math.inf
    for _ in range(n_epochs):
        entry = {"train_loss": train_one_epoch(net, loader_train, loss_fn, opt)}
        entry["val_loss"], entry["val_acc"] = evaluate(net, loader_val, loss_fn)
        sched.step(entry["val_loss"])
        log.append(entry)
        if entry["val_loss"] < lowest:
            lowest, kept = entry["val_loss"], copy.deepcopy(net.state_dict())
    return kept, log


def evaluate(net, data, loss_fn):
    net.eval()
    with torch.no_grad():
        return loop_over(net, data, loss_fn)


def loop_over(net, data, loss_fn, opt=None):
    """Shared loop: trains when an optimizer is given, else only measures."""
    total, correct, count = 0.0, 0, 0
    for inputs, labels in data:
        out = net(inputs)
        loss = loss_fn(out, labels)
        if opt is not None:
            opt.zero_grad()
            loss.backward()
            opt.step()
        total += loss.item() * labels.numel()
        correct += (out.argmax(1) == labels).sum().item()
        count += labels.numel()
    return total / count, correct / count


def train_one_epoch(net, data, loss_fn, opt) -> float:
    net.train()
    avg, _ = loop_over(net, data, loss_fn, opt)
    return avg


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    right = (logits.max(dim=1).indices == targets).count_nonzero().item()
    return right / targets.numel()
