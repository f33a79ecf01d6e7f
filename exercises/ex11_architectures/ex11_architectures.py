"""ex11 - Architectures: nn.Sequential, a residual block, and weight init with model.apply.

1. make_mlp(sizes): an MLP as an nn.Sequential.
2. ResidualBlock(channels): conv -> batch norm -> ReLU -> conv -> batch norm, plus the skip connection.
3. init_weights(m): a function for model.apply(init_weights) that initialises every layer it knows.

Run `grade ex11` to check your work.
"""

import torch
from torch import nn


def make_mlp(sizes: list[int]) -> nn.Sequential:
    """An nn.Sequential MLP: sizes=[4, 32, 32, 3] gives
    Linear(4, 32), ReLU, Linear(32, 32), ReLU, Linear(32, 3)  (no activation after the last Linear).

    Input [N, sizes[0]] -> output [N, sizes[-1]].
    """
    # TODO
    raise NotImplementedError


class ResidualBlock(nn.Module):
    """A ResNet basic block that keeps the shape [N, C, H, W]:

        out = relu(bn1(conv1(x)))
        out = bn2(conv2(out))
        return relu(out + x)

    conv1 and conv2: 3x3 convolutions, channels -> channels, stride 1, keeping H and W, without bias
    (the BatchNorm after each conv has its own shift). bn1 and bn2: nn.BatchNorm2d(channels), default settings.
    """

    def __init__(self, channels: int):
        super().__init__()
        # TODO: self.conv1, self.bn1, self.conv2, self.bn2 (use exactly these names)
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO
        raise NotImplementedError


def init_weights(m: nn.Module) -> None:
    """Initialise one module in place; used as model.apply(init_weights), which calls it on every sub-module.

    nn.Linear:      weight xavier-uniform (Glorot), bias zeros
    nn.Conv2d:      weight kaiming-normal (He) for ReLU, fan_in mode, bias zeros if the conv has one
    nn.BatchNorm2d: weight ones, bias zeros
    anything else:  leave it alone
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    mlp = make_mlp([4, 32, 32, 3])
    print(mlp, mlp(torch.randn(5, 4)).shape)
    block = ResidualBlock(8)
    block.apply(init_weights)
    print(block(torch.randn(2, 8, 6, 6)).shape)
