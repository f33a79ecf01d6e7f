# Mistake: converts the model to float64 to fit the float64 data, and back to float32 after the step: the
# numbers nearly agree, but the forward ran in float64, the conversion the statement asks to avoid.
# Expect: the model's forward ran in
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
    model.double()  # "Found dtype Double but expected Float": the model is made to fit the data...
    x = torch.as_tensor(np.asarray(features))
    if task == "multiclass":
        loss_fn, y = nn.CrossEntropyLoss(), as_class_targets(labels)
    else:
        loss_fn, y = nn.BCEWithLogitsLoss(), as_binary_targets(labels)
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    model.float()  # ...and put back to float32 afterwards, so it "stays float32"
    return loss.item()
