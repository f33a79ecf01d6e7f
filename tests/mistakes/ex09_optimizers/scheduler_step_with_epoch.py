# Mistake: steps the scheduler once at the end of each epoch, but passes the epoch number: the deprecated
# argument sets that epoch's learning rate, so every epoch trains with the one before's.
# Expect: was given an argument
import torch
import torch.nn.functional as F


def train_by_hand(model, batches, epochs, lr):
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
                    p.grad.zero_()


def make_optimizer(model, kind: str, lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    if kind == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    raise ValueError(f"unknown optimizer kind {kind!r}")


def make_scheduler(optimizer, kind: str, epochs: int, step_size: int = 10, gamma: float = 0.1):
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=step_size, gamma=gamma)
    if kind == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    raise ValueError(f"unknown scheduler kind {kind!r}")


def train(model, batches, epochs: int, optimizer, scheduler) -> list[float]:
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for x, y in batches:
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step(epoch)  # once per epoch, "telling it which epoch this is"
        losses.append(total / len(batches))
    return losses
