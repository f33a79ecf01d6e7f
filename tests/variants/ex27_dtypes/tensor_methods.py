# torch.tensor then .float() / .long(), unsqueeze for the binary targets, the loss functions from F.
import numpy as np
import torch
import torch.nn.functional as F


def as_inputs(features):
    return torch.tensor(np.array(features)).float()


def as_class_targets(labels):
    return torch.tensor(np.array(labels)).long().flatten()


def as_binary_targets(labels):
    return torch.tensor(np.array(labels)).float().unsqueeze(1)


def train_step(model, optimizer, features, labels, task):
    x = as_inputs(features)
    logits = model(x)
    if task == "binary":
        loss = F.binary_cross_entropy_with_logits(logits, as_binary_targets(labels))
    else:
        loss = F.cross_entropy(logits, as_class_targets(labels))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return float(loss)
