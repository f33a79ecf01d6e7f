# The sums written out, float64 inside, a masked_fill guard; a small class that remembers the statistics.
# Variant: scaler=zscore
import torch


def fit_standardizer(train_x):
    x = train_x.double()
    n = x.shape[0]
    mean = x.sum(dim=0) / n
    std = (((x - mean) ** 2).sum(dim=0) / (n - 1)).sqrt()
    std = std.masked_fill(std == 0, 1.0)
    return mean.to(train_x.dtype), std.to(train_x.dtype)


def standardize(x, mean, std):
    out = x.clone()
    out.sub_(mean).div_(std)
    return out


class Standardizer:
    def fit(self, x):
        self.mean, self.std = fit_standardizer(x)
        return self

    def __call__(self, x):
        return standardize(x, self.mean, self.std)


def prepare(train_x, val_x):
    s = Standardizer().fit(train_x)
    return s(train_x), s(val_x)
