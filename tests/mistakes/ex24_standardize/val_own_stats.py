# Mistake: standardises each split with its own statistics: the validation features are measured with another ruler.
# Expect: the validation split's own mean and std
import torch


def fit_standardizer(train_x):
    mean, std = train_x.mean(dim=0), train_x.std(dim=0)
    return mean, torch.where(std > 0, std, torch.ones_like(std))


def standardize(x, mean, std):
    return (x - mean) / std


def prepare(train_x, val_x):
    return standardize(train_x, *fit_standardizer(train_x)), standardize(val_x, *fit_standardizer(val_x))
