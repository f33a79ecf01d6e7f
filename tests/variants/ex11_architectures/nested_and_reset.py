"""A correct variant: an MLP of nested (Linear, ReLU) Sequentials, torch.add then an in-place ReLU in the
block, the ReLU gain from calculate_gain, and BatchNorm reset with its own reset_parameters()."""

import torch
from torch import nn


def make_mlp(sizes):
    hidden = [nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(sizes[:-2], sizes[1:-1])]
    return nn.Sequential(*hidden, nn.Linear(sizes[-2], sizes[-1]))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        for i in (1, 2):
            setattr(self, f"conv{i}", nn.Conv2d(channels, channels, 3, padding=1, bias=False))
            setattr(self, f"bn{i}", nn.BatchNorm2d(channels))

    def forward(self, x):
        out = self.bn1(self.conv1(x)).relu()
        out = self.bn2(self.conv2(out))
        return torch.add(out, x).relu_()


def init_weights(m):
    if isinstance(m, nn.BatchNorm2d):
        m.reset_parameters()
    elif isinstance(m, nn.Conv2d):
        std = nn.init.calculate_gain("relu") / m.weight[0].numel() ** 0.5
        nn.init.normal_(m.weight, 0.0, std)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
