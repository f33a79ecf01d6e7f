"""A correct variant: torch.random.manual_seed, the deterministic debug mode, a RandomSampler with its
own generator, and cuBLAS's smaller workspace setting."""

import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.random.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def enable_determinism():
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    torch.set_deterministic_debug_mode("error")  # the same switch as use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def make_loader(x, y, batch_size, seed):
    dataset = TensorDataset(x, y)
    sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(seed))
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def make_model():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))


def train_run(x, y, seed, epochs=2, device="cpu"):
    enable_determinism()
    set_seed(seed)
    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(epochs):
        for xb, yb in make_loader(x, y, 8, seed + _):  # a new loader per epoch, seeded per epoch: still reproducible
            loss = F.mse_loss(model(xb.to(device)), yb.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
    return losses
