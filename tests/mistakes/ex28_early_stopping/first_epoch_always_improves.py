# Mistake: starts best_loss at None, so the first epoch always improves, even a diverged one at inf.
# Expect: a diverged first epoch (inf) is an epoch without improvement

import copy
import csv

from torch import nn


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = None
        self.best_state = None
        self.bad_epochs = 0  # epochs in a row without improvement

    def step(self, val_loss: float, model: nn.Module) -> bool:
        # An improvement is strictly lower than the best by more than min_delta: an equal loss does not count.
        if self.best_loss is None or val_loss < self.best_loss - self.min_delta:
            self.best_loss = val_loss
            # A deep copy: state_dict() holds the live tensors, which the next epochs keep changing.
            self.best_state = copy.deepcopy(model.state_dict())
            self.bad_epochs = 0  # the count is of epochs in a row: an improvement starts it again
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience  # stop at the patience-th bad epoch, not one later


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
            f.flush()  # on disk as the epoch ends: a crash or a kill later still leaves the log so far
            stop = stopper.step(val_loss, model)
            if stopper.bad_epochs == 0:  # this epoch improved: it is the best so far
                best_epoch = epoch
            if stop:
                break
    model.load_state_dict(stopper.best_state)  # the model ends with the best epoch's weights, not the last
    return best_epoch
