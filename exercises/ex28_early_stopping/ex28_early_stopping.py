"""ex28 - Early stopping and logging: stop when validation stops improving, keep the best weights.

Write an EarlyStopping helper (patience, min_delta, a copy of the best weights) and a fit loop that
logs one CSV row per epoch, stops early and restores the best weights. Run `grade ex28` to check your work.
"""

import torch
from torch import nn


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0):
        """Stop after `patience` epochs in a row without improvement; an improvement is a validation loss
        lower than the best so far by more than `min_delta`."""
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = float("inf")
        self.best_state = None  # a copy of the model's state_dict at the best epoch
        # TODO: anything else you need to count

    def step(self, val_loss: float, model: nn.Module) -> bool:
        """Record this epoch's validation loss. On an improvement, remember the loss and a copy of the
        model's weights. Return True when it is time to stop."""
        # TODO
        raise NotImplementedError


def fit(model: nn.Module, train_epoch, validate, max_epochs: int, patience: int, min_delta: float,
        log_path: str) -> int:
    """Run at most `max_epochs` epochs; each calls train_epoch() (trains the model one epoch, returns the
    training loss) then validate() (returns the validation loss). Log every epoch as one row of the CSV file
    `log_path`, header `epoch,train_loss,val_loss`, epochs counted from 1, written as soon as the epoch ends.
    Stop early with EarlyStopping(patience, min_delta). Before returning, load the best weights into `model`.
    Returns the number of the best epoch."""
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    model = nn.Linear(2, 1)
    val_losses = iter([1.0, 0.8, 0.7, 0.69, 0.72, 0.75, 0.71, 0.9])

    def train_epoch():
        with torch.no_grad():
            model.weight.add_(1.0)  # stands for a real epoch of training
        return 0.5

    best = fit(model, train_epoch, lambda: next(val_losses), max_epochs=8, patience=3, min_delta=0.02,
               log_path="log.csv")
    print("best epoch:", best, "weights:", model.weight)
    print(open("log.csv").read())
