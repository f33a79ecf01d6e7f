"""ex24 - Normalising with training statistics only.

Write a standardiser: learn each feature's mean and std on the training split, then apply those same
statistics to the training and the validation split. Run `grade ex24` to check your work.
"""

import torch


def fit_standardizer(train_x: torch.Tensor):
    """Per-feature statistics of the training features `train_x` [N, D]: returns (mean, std), each of D
    values. A feature that never varies (std 0) must not produce NaN or inf later: guard its std."""
    # TODO: reduce over the samples, not over the features
    raise NotImplementedError


def standardize(x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """(x - mean) / std, feature by feature, as a new tensor (leave `x` unchanged)."""
    # TODO
    raise NotImplementedError


def prepare(train_x: torch.Tensor, val_x: torch.Tensor):
    """Standardise both splits with statistics learned on the training split only: returns (train_z, val_z)."""
    # TODO: fit once, apply twice
    raise NotImplementedError


if __name__ == "__main__":
    torch.manual_seed(0)
    scale = torch.tensor([100.0, 1.0, 0.01])
    train_x, val_x = torch.randn(200, 3) * scale + 50, torch.randn(50, 3) * scale + 60
    train_z, val_z = prepare(train_x, val_x)
    print("train mean", train_z.mean(0), "std", train_z.std(0))
    print("val mean", val_z.mean(0), "(not 0: the validation split is measured with the training ruler)")
