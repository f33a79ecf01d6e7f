"""A correct variant: named layers through an OrderedDict, nn.ReLU modules in the block, an in-place
addition, and the initialisations written out by hand with nn.init.uniform_/normal_ and .zero_()."""

import math
from collections import OrderedDict

import torch
from torch import nn


def make_mlp(sizes):
    named = OrderedDict()
    n = len(sizes) - 1
    for i in range(n):
        named[f"fc{i}"] = nn.Linear(sizes[i], sizes[i + 1])
        if i != n - 1:
            named[f"act{i}"] = nn.ReLU()
    return nn.Sequential(named)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, stride=1, padding="same", bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=(3, 3), padding=(1, 1), bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def init_weights(m):
    if type(m) is nn.Linear:
        fan_out, fan_in = m.weight.shape
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        nn.init.uniform_(m.weight, -bound, bound)
        if m.bias is not None:
            m.bias.data.zero_()
    if type(m) is nn.Conv2d:
        fan_in = m.weight[0].numel()
        with torch.no_grad():
            m.weight.normal_(0.0, math.sqrt(2.0 / fan_in))
            if m.bias is not None:
                m.bias.zero_()
    if type(m) is nn.BatchNorm2d:
        with torch.no_grad():
            m.weight.fill_(1.0)
            m.bias.fill_(0.0)
