# Population std with keepdim (shape [1, D]), a clamp as the guard, torch.sub / torch.div.
# Variant: scaler=zscore
import torch


def fit_standardizer(train_x):
    mean = train_x.mean(dim=0, keepdim=True)
    std = train_x.std(dim=0, keepdim=True, correction=0).clamp_min(1e-6)
    return mean, std


def standardize(x, mean, std):
    return torch.div(torch.sub(x, mean), std)


def prepare(train_x, val_x):
    stats = fit_standardizer(train_x)
    return tuple(standardize(split, *stats) for split in (train_x, val_x))
