# Mistake: starts the count of epochs without improvement at 1: a first epoch that improves on nothing (loss inf)
# counts twice, so the run stops one epoch early.
# Expect: starts at 0
import copy
import csv


class EarlyStopping:
    def __init__(self, patience, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = float("inf")
        self.best_state = None
        self.bad_epochs = 1

    def step(self, val_loss, model):
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss = val_loss
            self.best_state = copy.deepcopy(model.state_dict())
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def fit(model, train_epoch, validate, max_epochs, patience, min_delta, log_path):
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
