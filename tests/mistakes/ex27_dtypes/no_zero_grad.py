# Mistake: converts every dtype right but never clears the gradients: the first call passes, a second call on
# the same model steps with the gradients of both batches (backward adds to .grad).
# Expect: moved by the gradients of both batches
import numpy as np
import torch
from torch import nn


def as_inputs(features):
    return torch.as_tensor(np.asarray(features), dtype=torch.float32)


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
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
