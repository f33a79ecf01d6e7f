# Mistake: seeds the global generator in make_loader instead of giving the DataLoader its own; the order then depends on what else drew numbers before iterating.
# Expect: its own torch.Generator

import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def enable_determinism():
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def make_loader(x, y, batch_size, seed):
    torch.manual_seed(seed)
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True)


def make_model():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))


def train_run(x, y, seed, epochs=2, device="cpu"):
    set_seed(seed)
    enable_determinism()
    model = make_model().to(device)
    loader = make_loader(x, y, 8, seed)
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
