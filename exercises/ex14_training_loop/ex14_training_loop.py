"""ex14 - The training loop: train and validation phases, a scheduler, and the best model kept.

Write `accuracy`, `train_one_epoch`, `evaluate` and `fit` for a classifier whose model returns raw
scores (logits) of shape [B, C] and whose loaders yield (x, y) with y the integer class of each sample.
Run `grade ex14` to check your work.
"""

import copy

import torch
from torch import nn


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """The fraction (0 to 1) of rows of `logits` [N, C] whose largest score is at the class `targets` [N],
    as a Python float."""
    # TODO
    raise NotImplementedError


def train_one_epoch(model: nn.Module, loader, criterion, optimizer) -> float:
    """One pass over `loader` in training mode, one optimizer step per batch.

    Returns the mean training loss over the samples (a Python float).
    """
    # TODO: the training phase.
    raise NotImplementedError


def evaluate(model: nn.Module, loader, criterion) -> tuple[float, float]:
    """One pass over `loader` in evaluation mode, without building a graph.

    Returns (mean loss over the samples, accuracy), two Python floats.
    """
    # TODO: the validation phase.
    raise NotImplementedError


def fit(model: nn.Module, train_loader, val_loader, epochs: int, lr: float = 0.01):
    """Train for `epochs` epochs with CrossEntropyLoss, Adam(lr) and ReduceLROnPlateau.

    Returns (best_state, history): best_state, a copy of model.state_dict() from the epoch with the
    lowest validation loss; history, one dict per epoch with "train_loss", "val_loss" and "val_acc".
    """
    # TODO: criterion, optimizer, scheduler; then for each epoch: train, validate, step the scheduler,
    # keep the best weights.
    raise NotImplementedError


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    x = torch.randn(300, 4)
    y = (x[:, 0] + x[:, 1] > 0).long()
    train = DataLoader(TensorDataset(x[:200], y[:200]), batch_size=32, shuffle=True)
    val = DataLoader(TensorDataset(x[200:], y[200:]), batch_size=50)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
    best_state, history = fit(net, train, val, epochs=5)
    for epoch, row in enumerate(history):
        print(epoch, row)
