# Mistake: one module-level generator for every loader: making a second loader reseeds the first one's.
# Expect: the loaders share one generator

import os
import random
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def set_seed(seed: int) -> None:
    # Three libraries, three generators: seeding one leaves the others drawing different numbers each run.
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # torch.manual_seed covers CUDA too; explicit for older versions


def enable_determinism() -> None:
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"  # deterministic cuBLAS needs a fixed workspace
    # An error for an op that has no deterministic version: warn_only=True would warn and let the run differ.
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False  # benchmark picks algorithms by timing: not repeatable


GENERATOR = torch.Generator()  # one generator for every loader


def make_loader(x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: int) -> DataLoader:
    # The loader's own generator: the order depends on `seed` alone, not on how many numbers model init and
    # dropout drew from torch's global one before the loader is iterated. Each epoch draws a new order from it.
    GENERATOR.manual_seed(seed)
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True, generator=GENERATOR)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))


def train_run(x: torch.Tensor, y: torch.Tensor, seed: int, epochs: int = 2, device: str = "cpu") -> List[float]:
    set_seed(seed)  # before make_model: the initial weights are drawn from torch's generator
    enable_determinism()
    model = make_model().to(device)
    loader = make_loader(x, y, 8, seed)  # instead of a DataLoader drawing from the global generator
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
