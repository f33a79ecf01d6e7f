# The log opened in append mode once per epoch (closing it writes it out), csv.DictWriter, a while loop.
import copy
import csv
import os


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience, self.min_delta = patience, min_delta
        self.best_loss, self.best_state = float("inf"), None
        self.since_best = 0

    def step(self, val_loss: float, model) -> bool:
        improved = val_loss < self.best_loss - self.min_delta
        self.since_best = 0 if improved else self.since_best + 1
        if improved:
            self.best_loss = val_loss
            self.best_state = copy.deepcopy(model.state_dict())
        return self.since_best >= self.patience


def fit(model, train_epoch, validate, max_epochs, patience, min_delta, log_path):
    fields = ["epoch", "train_loss", "val_loss"]
    if os.path.exists(log_path):
        os.remove(log_path)
    stopper, epoch, best_epoch, stop = EarlyStopping(patience, min_delta), 0, None, False
    while epoch < max_epochs and not stop:
        epoch += 1
        row = {"epoch": epoch, "train_loss": train_epoch(), "val_loss": validate()}
        new = not os.path.exists(log_path)
        with open(log_path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            if new:
                writer.writeheader()
            writer.writerow(row)
        stop = stopper.step(row["val_loss"], model)
        if stopper.since_best == 0:
            best_epoch = epoch
    model.load_state_dict(stopper.best_state)
    return best_epoch
