"""ex21 - Gradient accumulation: a big batch on a small GPU.

A batch too big for the GPU's memory can be split into k micro-batches: run forward and backward on each one
(its graph is freed right after), let the gradients add up in .grad, and update once for all k. Done right,
the update is exactly the one the big batch would have made.

Run `grade ex21` to check your work.
"""

import torch
import torch.nn.functional as F
from torch import nn


def train_accumulated(model: nn.Module, optimizer: torch.optim.Optimizer,
                      batches: list[tuple[torch.Tensor, torch.Tensor]], k: int) -> list[float]:
    """Train `model` on the micro-batches `batches` ([(x, y), ...], all the same size) with the mean squared
    error, accumulating the gradients of k micro-batches for each optimizer step.

    Each group of k consecutive micro-batches makes one update, equal to one step on the group's concatenation
    (the big batch); when len(batches) is not a multiple of k, the last group holds the rest and makes its
    update too. The gradients start at zero.
    Returns the big-batch loss of each group (before its update), one float per optimizer step.
    """
    # TODO: one backward per micro-batch; step and reset the gradients once per group of k micro-batches
    # (the last group may be shorter).
    raise NotImplementedError


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    batches = list(zip(x.split(8), y.split(8)))  # 8 micro-batches of 8
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        print(epoch, train_accumulated(model, optimizer, batches, k=4))
