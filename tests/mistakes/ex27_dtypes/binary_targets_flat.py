# Mistake: binary targets of shape [N] next to logits of shape [N, 1]: "Target size must be the same as input size".
# Expect: has shape [12], expected [12, 1]
import numpy as np
import torch
from torch import nn


def as_inputs(features):
    return torch.as_tensor(np.asarray(features), dtype=torch.float32)


def as_class_targets(labels):
    return torch.as_tensor(np.asarray(labels), dtype=torch.long).reshape(-1)


def as_binary_targets(labels):
    return torch.as_tensor(np.asarray(labels), dtype=torch.float32)


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

