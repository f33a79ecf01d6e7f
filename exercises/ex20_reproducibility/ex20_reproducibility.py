"""ex20 - Reproducibility: the same seed, the same run.

Python's `random`, NumPy and torch each have their own random number generator; the DataLoader's
shuffling, the model's initial weights and dropout all draw from them. Seed all of them, ask torch
for deterministic algorithms, and give the DataLoader its own seeded generator, so that two runs
with the same seed produce exactly the same losses. Run `grade ex20` to check your work.
"""

import os  # noqa: F401 - you will need it for an environment variable
import random  # noqa: F401
from typing import List

import numpy as np  # noqa: F401
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def set_seed(seed: int) -> None:
    """Seed Python's `random`, NumPy's global generator and torch (CPU and all GPUs) with `seed`."""
    # TODO
    raise NotImplementedError


def enable_determinism() -> None:
    """Make torch use deterministic algorithms only (an error for an op that has none),
    and configure cuDNN and cuBLAS for it (see the README)."""
    # TODO
    raise NotImplementedError


def make_loader(x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: int) -> DataLoader:
    """A DataLoader over TensorDataset(x, y) that shuffles every epoch, in an order that depends only on
    `seed` (not on whatever else used the global random generator before)."""
    # TODO
    raise NotImplementedError


def make_model() -> nn.Module:
    """The model to train (given: its initial weights and its dropout are random)."""
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))


def train_run(x: torch.Tensor, y: torch.Tensor, seed: int, epochs: int = 2, device: str = "cpu") -> List[float]:
    """Train make_model() on (x [N, 4], y [N, 1]) with SGD (lr 0.05, batches of 8) for `epochs` epochs on
    `device`; return the loss of every batch as a list of Python floats.

    Two calls with the same seed must return exactly the same list; another seed, another list.
    """
    # TODO: this runs, but two calls give different losses. Make it reproducible with the three
    # functions above (where you call them matters).
    model = make_model().to(device)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    model.train()
    for _ in range(epochs):
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = F.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


if __name__ == "__main__":
    x = torch.randn(40, 4)
    y = x.sum(dim=1, keepdim=True)
    print(train_run(x, y, seed=0)[:3])
    print(train_run(x, y, seed=0)[:3], "<- should be the same")
