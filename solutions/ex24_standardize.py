"""Reference solution of ex24: statistics per feature from the training split, a zero std replaced by 1."""

import torch


def fit_standardizer(train_x: torch.Tensor):
    mean = train_x.mean(dim=0)
    std = train_x.std(dim=0)
    return mean, torch.where(std > 0, std, torch.ones_like(std))


def standardize(x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    return (x - mean) / std


def prepare(train_x: torch.Tensor, val_x: torch.Tensor):
    mean, std = fit_standardizer(train_x)
    return standardize(train_x, mean, std), standardize(val_x, mean, std)
