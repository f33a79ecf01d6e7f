# Best weights as {k: v.clone()}, a counter named wait, the log written with print(..., file=f, flush=True).
import math

import torch


class EarlyStopping:
    def __init__(self, patience, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = math.inf
        self.best_state = None
        self.wait = 0
        self.best_epoch = 0
        self.epochs = 0

    def step(self, val_loss, model):
        self.epochs += 1
        if self.best_loss - val_loss > self.min_delta:
            self.best_loss = val_loss
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            self.best_epoch = self.epochs
            self.wait = 0
            return False
        self.wait += 1
        return self.wait >= self.patience


def fit(model, train_epoch, validate, max_epochs, patience, min_delta, log_path):
    stopper = EarlyStopping(patience, min_delta)
    with open(log_path, "w") as f:
        print("epoch,train_loss,val_loss", file=f, flush=True)
        for epoch in range(1, max_epochs + 1):
            train_loss = train_epoch()
            val_loss = validate()
            print(f"{epoch},{train_loss!r},{val_loss!r}", file=f, flush=True)
            if stopper.step(val_loss, model):
                break
    with torch.no_grad():
        model.load_state_dict(stopper.best_state)
    return stopper.best_epoch
