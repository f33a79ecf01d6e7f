# Mistake: sends the batch to the GPU whenever there is one, although the model given stays on the CPU.
# Expect: sends tensors to it
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
    device = "cuda" if torch.cuda.is_available() else "cpu"  # "use the GPU when there is one"
    x = as_inputs(features).to(device)
    if task == "multiclass":
        loss_fn, y = nn.CrossEntropyLoss(), as_class_targets(labels)
    else:
        loss_fn, y = nn.BCEWithLogitsLoss(), as_binary_targets(labels)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
