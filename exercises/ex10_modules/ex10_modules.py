"""ex10 - nn.Module: parameters, sub-modules, and calling a module.

Part 1: write `Affine`, a fully connected layer of your own, like nn.Linear: its weight and bias
must be nn.Parameter so that model.parameters() (and so the optimizer) can find them.

Part 2: `Stack` below was written in a hurry and it does not learn. Three things are wrong with it:
its layers sit in a plain Python list, its `scale` is a plain tensor, and its forward calls
`layer.forward(x)` instead of `layer(x)`. Fix them without changing what the model computes.

Run `grade ex10` to check your work.
"""

import torch
from torch import nn


class Affine(nn.Module):
    """y = x @ weight.T + bias, like nn.Linear(in_features, out_features).

    weight: shape [out_features, in_features]; bias: shape [out_features]; both learnable.
    Input x: [N, in_features] -> output [N, out_features].
    """

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # TODO: create self.weight and self.bias as learnable parameters (random weight, e.g.
        # scaled by 1/sqrt(in_features); bias may start at zeros).
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO
        raise NotImplementedError


class Stack(nn.Module):
    """sizes=[4, 16, 16, 3] -> Linear(4, 16), ReLU, Linear(16, 16), ReLU, Linear(16, 3), then * scale.

    self.layers holds the nn.Linear layers in order; self.scale (shape [sizes[-1]], starts at ones)
    multiplies the output and must be learned too.
    """

    # FIXME: this model does not train. Find and fix the three bugs.
    def __init__(self, sizes: list[int]):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]
        self.scale = torch.ones(sizes[-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = torch.relu(layer.forward(x))
        return self.layers[-1].forward(x) * self.scale


if __name__ == "__main__":
    model = Stack([4, 16, 16, 3])
    print("parameters seen by the optimizer:", sum(p.numel() for p in model.parameters()))
    print(model(torch.randn(5, 4)).shape)
