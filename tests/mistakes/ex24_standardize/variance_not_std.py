# Mistake: divides by the variance instead of the standard deviation.
# Variant: scaler=zscore
# Expect: That is the variance
import torch


def fit_standardizer(train_x):
    var = train_x.var(dim=0)
    return train_x.mean(dim=0), torch.where(var > 0, var, torch.ones_like(var))


def standardize(x, mean, std):
    return (x - mean) / std


def prepare(train_x, val_x):
    mean, std = fit_standardizer(train_x)
    return standardize(train_x, mean, std), standardize(val_x, mean, std)

