# Mistake: standardises x in place (x -= mean; x /= std): the caller's raw data are overwritten.
# Expect: changed x in place
import torch


def fit_standardizer(train_x):
    mean, std = train_x.mean(dim=0), train_x.std(dim=0)
    return mean, torch.where(std > 0, std, torch.ones_like(std))


def standardize(x, mean, std):
    x -= mean
    x /= std
    return x


def prepare(train_x, val_x):
    mean, std = fit_standardizer(train_x)
    return standardize(train_x.clone(), mean, std), standardize(val_x.clone(), mean, std)
