"""A correct variant: seeds everything first, so even a DataLoader drawing from the (now seeded) global
generator inside train_run repeats; a hand-written SGD update; PYTHONHASHSEED set as well."""

import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def set_seed(seed: int) -> None:
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def enable_determinism() -> None:
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(mode=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def make_loader(x, y, batch_size, seed):
    return DataLoader(TensorDataset(x, y), batch_size, shuffle=True,
                      generator=torch.Generator().manual_seed(seed))


def make_model():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))


def train_run(x, y, seed, epochs=2, device="cpu"):
    set_seed(seed)
    enable_determinism()
    model = make_model().to(device)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)  # global generator, seeded above
    losses = []
    for _ in range(epochs):
        for xb, yb in loader:
            loss = F.mse_loss(model(xb.to(device)), yb.to(device))
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.05 * p.grad
            losses.append(loss.item())
    return losses
