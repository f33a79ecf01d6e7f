# Mistake: makes the model fit the data: model.double() instead of converting the features.
# Expect: the model was converted to fit the data
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
    model.double()
    x = torch.as_tensor(np.asarray(features))
    if task == "multiclass":
        loss_fn, y = nn.CrossEntropyLoss(), as_class_targets(labels)
    else:
        loss_fn, y = nn.BCEWithLogitsLoss(), as_binary_targets(labels).double()
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
