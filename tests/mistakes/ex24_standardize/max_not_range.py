# Mistake: divides by each feature's maximum instead of its range max - min.
# Variant: scaler=minmax
# Expect: That is the maximum
import torch


def fit_standardizer(train_x):
    low, high = train_x.amin(dim=0), train_x.amax(dim=0)
    return low, torch.where(high != 0, high, torch.ones_like(high))


def standardize(x, low, span):
    return (x - low) / span


def prepare(train_x, val_x):
    low, span = fit_standardizer(train_x)
    return standardize(train_x, low, span), standardize(val_x, low, span)
