# Min-max with min/max(...).values and keepdim (shape [1, D]), a clamp as the guard, torch.sub / torch.div.
# Variant: scaler=minmax
import torch


def fit_standardizer(train_x):
    low = train_x.min(dim=0, keepdim=True).values
    high = train_x.max(dim=0, keepdim=True).values
    return low, (high - low).clamp_min(1e-6)


def standardize(x, low, span):
    return torch.div(torch.sub(x, low), span)


def prepare(train_x, val_x):
    stats = fit_standardizer(train_x)
    return tuple(standardize(split, *stats) for split in (train_x, val_x))
