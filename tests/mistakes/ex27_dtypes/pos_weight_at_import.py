# Mistake: a pos_weight made once, at import, on the GPU whenever there is one: the loss meets it there while the
# model and the data are on the CPU.
# Expect: what your file put on cuda at import

import numpy as np
import torch
from torch import nn

POS_WEIGHT = torch.ones(1, device='cuda' if torch.cuda.is_available() else 'cpu')


def as_inputs(features) -> torch.Tensor:
    # Whatever came in (float64 from NumPy, ints from a list) becomes float32, the model's dtype:
    # torch.from_numpy alone would keep float64, which a float32 Linear refuses.
    return torch.as_tensor(np.asarray(features), dtype=torch.float32)


def as_class_targets(labels) -> torch.Tensor:
    # CrossEntropyLoss takes class indices as int64 (labels read as 2.0 become 2), one per sample: [N].
    return torch.as_tensor(np.asarray(labels), dtype=torch.long).reshape(-1)


def as_binary_targets(labels) -> torch.Tensor:
    # BCEWithLogitsLoss takes float targets (probabilities), shaped as the logits [N, 1].
    return torch.as_tensor(np.asarray(labels), dtype=torch.float32).reshape(-1, 1)


def train_step(model: nn.Module, optimizer, features, labels, task: str) -> float:
    # Convert the data, never the model: model.double() would make every later float32 input fail.
    x = as_inputs(features)
    if task == "multiclass":
        loss_fn, y = nn.CrossEntropyLoss(), as_class_targets(labels)
    else:
        loss_fn, y = nn.BCEWithLogitsLoss(pos_weight=POS_WEIGHT), as_binary_targets(labels)
    optimizer.zero_grad()  # a second call on the same model must not add to this one's gradients
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
