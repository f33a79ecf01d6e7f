# Mistake: learns the statistics on the training and validation splits together: the validation data leak
# into the preprocessing.
# Expect: training and validation splits together
import torch


def fit_standardizer(train_x):
    mean, std = train_x.mean(dim=0), train_x.std(dim=0)
    return mean, torch.where(std > 0, std, torch.ones_like(std))


def standardize(x, mean, std):
    return (x - mean) / std


def prepare(train_x, val_x):
    mean, std = fit_standardizer(torch.cat([train_x, val_x]))
    return standardize(train_x, mean, std), standardize(val_x, mean, std)
