# Mistake: collects the log rows in memory and writes the file once training is over: a run that dies leaves no log.
# Expect: flush the file
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
    rows, best_epoch = [], 0
    for epoch in range(1, max_epochs + 1):
        train_loss, val_loss = train_epoch(), validate()
        rows.append([epoch, train_loss, val_loss])
        stop = stopper.step(val_loss, model)
        if stopper.bad_epochs == 0:
            best_epoch = epoch
        if stop:
            break
    with open(log_path, "w", newline="") as f:
        csv.writer(f).writerows([["epoch", "train_loss", "val_loss"]] + rows)
    model.load_state_dict(stopper.best_state)
    return best_epoch
