"""ex17 - Mixed precision: torch.autocast and torch.amp.GradScaler.

Mixed precision runs the forward pass in a 16-bit dtype (faster, half the activation memory) while the weights
stay in float32. Two tools make it safe:
- torch.autocast(device_type, dtype=...) picks the dtype per operation (matmuls in 16 bits, sums and losses in
  float32);
- torch.amp.GradScaler multiplies the loss before backward so that small float16 gradients do not underflow
  to 0, divides them back before they are used, and skips a step whose gradients overflowed.

Write the three functions below for any device type ("cpu" or "cuda"). Run `grade ex17` to check your work
(and `grade ex17 --device cuda` on a machine with a GPU).
"""

import torch
import torch.nn.functional as F
from torch import nn


def autocast_dtype(device_type: str) -> torch.dtype:
    """The dtype autocast should use on `device_type`: torch.bfloat16 for "cpu", torch.float16 for "cuda"."""
    # TODO
    raise NotImplementedError


def make_scaler(device_type: str) -> torch.amp.GradScaler:
    """A gradient scaler for `device_type`, from torch.amp (not the deprecated torch.cuda.amp)."""
    # TODO
    raise NotImplementedError


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler,
               x: torch.Tensor, y: torch.Tensor, device_type: str, max_norm: float = 1.0):
    """One mixed-precision training step of `model` on (x, y) with the mean squared error loss.

    Zero the gradients; run the forward pass and the loss under autocast; backward the scaled loss; clip the
    gradients' norm to `max_norm` (on their true, unscaled values); step and update through the scaler.
    Returns the loss (a Python float or a one-element tensor).
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(256, 8, device=device_type)
    y = x[:, :1] * 2 - x[:, 1:2]
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)).to(device_type)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = make_scaler(device_type)
    for step in range(50):
        loss = train_step(model, optimizer, scaler, x, y, device_type)
        if step % 10 == 0:
            print(step, float(loss), "scale", scaler.get_scale())
