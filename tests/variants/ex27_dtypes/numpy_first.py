# Converted in NumPy first (astype), then torch.from_numpy; the model's own dtype read from its parameters.
import numpy as np
import torch
from torch import nn


def as_inputs(features):
    return torch.from_numpy(np.asarray(features).astype(np.float32))


def as_class_targets(labels):
    return torch.from_numpy(np.asarray(labels).astype(np.int64).ravel())


def as_binary_targets(labels):
    return torch.from_numpy(np.asarray(labels, dtype=np.float32).reshape(-1, 1))


def train_step(model: nn.Module, optimizer, features, labels, task: str) -> float:
    dtype = next(model.parameters()).dtype
    x = as_inputs(features).to(dtype)
    criterion = nn.CrossEntropyLoss() if task == "multiclass" else nn.BCEWithLogitsLoss()
    target = as_class_targets(labels) if task == "multiclass" else as_binary_targets(labels).to(dtype)
    optimizer.zero_grad()
    loss = criterion(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
