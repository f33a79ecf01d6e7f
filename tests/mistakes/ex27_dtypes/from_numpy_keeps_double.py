# Mistake: torch.from_numpy keeps NumPy's float64: the float32 model raises "mat1 and mat2 must have the same dtype".
# Expect: NumPy makes float64
import numpy as np
import torch
from torch import nn


def as_inputs(features):
    return torch.from_numpy(np.asarray(features))


def as_class_targets(labels):
    return torch.as_tensor(np.asarray(labels), dtype=torch.long).reshape(-1)


def as_binary_targets(labels):
    return torch.as_tensor(np.asarray(labels), dtype=torch.float32).reshape(-1, 1)


def train_step(model, optimizer, features, labels, task):
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

