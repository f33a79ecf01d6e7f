"""ex27 - dtype hygiene: NumPy data into a float32 model, and the label dtypes each loss expects.

Data often arrive as NumPy arrays or lists: float64 features, labels read from a CSV as floats. A float32
model refuses float64 inputs ("Found dtype Double but expected Float"), nn.CrossEntropyLoss wants int64
class indices, nn.BCEWithLogitsLoss wants float targets of the logits' shape. Convert the data, not the
model. Run `grade ex27` to check your work.
"""

import numpy as np
import torch
from torch import nn


def as_inputs(features) -> torch.Tensor:
    """`features` (a NumPy array of any numeric dtype, or a list of lists) as a float32 tensor [N, D]."""
    # TODO
    raise NotImplementedError


def as_class_targets(labels) -> torch.Tensor:
    """Class labels (a NumPy array or a list, ints or whole floats such as 2.0) as nn.CrossEntropyLoss
    wants them: an int64 tensor [N] of class indices."""
    # TODO
    raise NotImplementedError


def as_binary_targets(labels) -> torch.Tensor:
    """0/1 labels (a NumPy array or a list, ints, floats or bools) as nn.BCEWithLogitsLoss wants them next
    to logits of shape [N, 1]: a float32 tensor [N, 1]."""
    # TODO
    raise NotImplementedError


def train_step(model: nn.Module, optimizer, features, labels, task: str) -> float:
    """One optimizer step of the float32 `model` on NumPy `features` and `labels`. task "multiclass": the
    model outputs [N, C] logits, use nn.CrossEntropyLoss; task "binary": it outputs [N, 1] logits, use
    nn.BCEWithLogitsLoss. Returns the loss as a Python float. The model stays float32."""
    # TODO: convert with the functions above
    raise NotImplementedError


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    features = rng.normal(size=(8, 4))  # float64, as NumPy makes it
    model = nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    print(train_step(model, optimizer, features, rng.integers(0, 3, 8).astype(float), "multiclass"))
    binary = nn.Linear(4, 1)
    print(train_step(binary, torch.optim.SGD(binary.parameters(), lr=0.1), features, rng.random(8) > 0.5, "binary"))
