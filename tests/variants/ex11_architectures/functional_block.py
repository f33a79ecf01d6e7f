"""A correct variant: a list comprehension for the MLP, F.relu in the block, nn.init.constant_ and
kaiming_normal_ with its defaults (a=0, leaky_relu gain = the ReLU gain), modules matched by a tuple."""

import torch
import torch.nn.functional as F
from torch import nn


def make_mlp(sizes: list[int]) -> nn.Sequential:
    pairs = list(zip(sizes, sizes[1:]))
    mods: list[nn.Module] = []
    for k, (i, o) in enumerate(pairs):
        mods += [nn.Linear(i, o), nn.ReLU()] if k < len(pairs) - 1 else [nn.Linear(i, o)]
    return nn.Sequential(*mods)


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))


def init_weights(m: nn.Module) -> None:
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight, gain=1.0)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.constant_(m.weight, 1)
    if isinstance(m, (nn.Linear, nn.Conv2d, nn.BatchNorm2d)) and m.bias is not None:
        nn.init.constant_(m.bias, 0.0)
