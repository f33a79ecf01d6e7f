# Mistake: initialises A with kaiming_uniform_'s default a=0: a range sqrt(6) times wider than nn.Linear's.
# Expect: lora_A's entries reach

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.lora_A)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling

    def merged(self):
        w = self.base.weight
        layer = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None).to(w)
        with torch.no_grad():
            layer.weight.copy_(w + self.scaling * self.lora_B @ self.lora_A)
            if self.base.bias is not None:
                layer.bias.copy_(self.base.bias)
        return layer
