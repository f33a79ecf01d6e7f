# Mistake: adds B @ A to W in the merge without the scaling.
# Expect: is W + B @ A

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling

    def merged(self):
        w = self.base.weight
        layer = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None).to(w)
        with torch.no_grad():
            layer.weight.copy_(w + self.lora_B @ self.lora_A)
            if self.base.bias is not None:
                layer.bias.copy_(self.base.bias)
        return layer
