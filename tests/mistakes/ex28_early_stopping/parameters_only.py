# Mistake: keeps a copy of the named parameters as the best state: the model's buffers (a BatchNorm's
# statistics) are not in it, and loading it back fails on the missing keys.
# Expect: not its buffers
import copy
import csv

from torch import nn


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = float("inf")
        self.best_state = None
        self.bad_epochs = 0

    def step(self, val_loss: float, model: nn.Module) -> bool:
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss = val_loss
            self.best_state = {k: v.detach().clone() for k, v in model.named_parameters()}
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def fit(model: nn.Module, train_epoch, validate, max_epochs: int, patience: int, min_delta: float,
        log_path: str) -> int:
    stopper = EarlyStopping(patience, min_delta)
    best_epoch = 0
    with open(log_path, "w", newline="") as f:
        log = csv.writer(f)
        log.writerow(["epoch", "train_loss", "val_loss"])
        for epoch in range(1, max_epochs + 1):
            train_loss = train_epoch()
            val_loss = validate()
            log.writerow([epoch, train_loss, val_loss])
            f.flush()
            stop = stopper.step(val_loss, model)
            if stopper.bad_epochs == 0:
                best_epoch = epoch
            if stop:
                break
    model.load_state_dict(stopper.best_state)
    return best_epoch
