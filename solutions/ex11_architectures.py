"""Reference solution of ex11 (nn.Sequential MLP, residual block, init through model.apply)."""

import torch
from torch import nn


def make_mlp(sizes: list[int]) -> nn.Sequential:
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        # A ReLU between two Linears (without one they collapse into a single linear map), none after the
        # last: the outputs are logits or values that may be negative.
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        # padding=1 keeps H and W for a 3x3 kernel, so x can be added at the end. No bias: the BatchNorm
        # after each conv subtracts the mean and adds its own shift, which would cancel it.
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)  # its own statistics: a module used twice would share them

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        # Add the skip before the last ReLU, out of place: x may be needed by backward and by the caller.
        return torch.relu(out + x)


def init_weights(m: nn.Module) -> None:
    # model.apply calls this on every sub-module: pick by type, and leave modules it does not know alone.
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:  # a layer made with bias=False has m.bias = None
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        # He init: variance 2 / fan_in keeps the signal's scale through ReLU, which zeroes half of it.
        nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
