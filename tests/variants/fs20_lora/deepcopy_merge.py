"""A correct variant: the base frozen parameter by parameter and run under no_grad, A drawn with uniform_, F.linear for
the low-rank path, and the merge as a deep copy of the base with the update added to the copy's weight."""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        for p in base.parameters():
            p.requires_grad = False
        self.base = base
        bound = 1 / math.sqrt(base.in_features)  # what kaiming_uniform_(a=sqrt(5)) draws from
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features).uniform_(-bound, bound))
        self.lora_B = nn.Parameter(base.weight.new_zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        with torch.no_grad():
            frozen = self.base(x)
        return frozen + self.scaling * F.linear(F.linear(x, self.lora_A), self.lora_B)

    def merged(self):
        layer = copy.deepcopy(self.base)
        with torch.no_grad():
            layer.weight.add_(self.scaling * (self.lora_B @ self.lora_A))
        return layer
