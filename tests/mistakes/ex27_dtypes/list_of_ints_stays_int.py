# Mistake: converts with torch.tensor and only fixes float64: integer features stay int64.
# Expect: has dtype torch.int64, expected torch.float32
import numpy as np
import torch
from torch import nn


def as_inputs(features):
    x = torch.tensor(np.asarray(features))
    return x.float() if x.dtype == torch.float64 else x


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

