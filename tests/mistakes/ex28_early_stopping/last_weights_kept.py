# Mistake: stops at the right epoch but never loads the best weights back: the model ends with the last epoch's.
# Expect: load the best state back
import copy
import csv


class EarlyStopping:
    def __init__(self, patience, min_delta=0.0):
        self.patience, self.min_delta = patience, min_delta
        self.best_loss, self.best_state, self.bad_epochs = float("inf"), None, 0

    def step(self, val_loss, model):
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss, self.best_state, self.bad_epochs = val_loss, copy.deepcopy(model.state_dict()), 0
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
            train_loss, val_loss = train_epoch(), validate()
            log.writerow([epoch, train_loss, val_loss])
            f.flush()
            stop = stopper.step(val_loss, model)
            if stopper.bad_epochs == 0:
                best_epoch = epoch
            if stop:
                break
    return best_epoch
