"""A correct variant: unflatten, transpose(0, 1).contiguous().view, narrow + mul_, a row view then index."""

import torch


def to_matrix(x, rows):
    return x.unflatten(0, (rows, -1))


def columns_flat(x):
    return x.transpose(0, 1).contiguous().view(x.numel())


def scale_row_(x, i, factor):
    x.narrow(0, i, 1).mul_(factor)


def fill_flat_(x, k, value):
    row = x[k // x.size(1)]  # a view of row k // cols
    row[k % x.size(1)] = value
