"""A correct variant: torch.rand scaled to [-bound, bound) and copied in under no_grad; einsum in forward."""
import math

import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.zeros(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.zeros(out_features))
        else:
            self.bias = None
        self.reset_parameters()

    def reset_parameters(self):
        bound = self.in_features ** -0.5
        with torch.no_grad():
            self.weight.copy_((torch.rand(self.weight.shape) * 2 - 1) * bound)
            if self.bias is not None:
                self.bias.copy_((torch.rand(self.out_features) * 2 - 1) * bound)

    def forward(self, x):
        out = torch.einsum("...i,oi->...o", x, self.weight)
        if self.bias is not None:
            out = out + self.bias
        return out
