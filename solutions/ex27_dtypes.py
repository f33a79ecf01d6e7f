"""Reference solution of ex27: convert the data (float32 features, int64 classes, float32 [N, 1] binary targets)."""

import numpy as np
import torch
from torch import nn


def as_inputs(features) -> torch.Tensor:
    return torch.as_tensor(np.asarray(features), dtype=torch.float32)


def as_class_targets(labels) -> torch.Tensor:
    return torch.as_tensor(np.asarray(labels), dtype=torch.long).reshape(-1)


def as_binary_targets(labels) -> torch.Tensor:
    return torch.as_tensor(np.asarray(labels), dtype=torch.float32).reshape(-1, 1)


def train_step(model: nn.Module, optimizer, features, labels, task: str) -> float:
    x = as_inputs(features)
    if task == "multiclass":
        loss_fn, y = nn.CrossEntropyLoss(), as_class_targets(labels)
    else:
        loss_fn, y = nn.BCEWithLogitsLoss(), as_binary_targets(labels)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
