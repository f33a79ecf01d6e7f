# Mistake: stores A as [in, r] and B as [r, out] (x @ A @ B), the transposes of nn.Linear's layout.
# Expect: both transposed

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.empty(base.in_features, r))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.lora_B = nn.Parameter(torch.zeros(r, base.out_features))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A @ self.lora_B) * self.scaling

    def merged(self):
        w = self.base.weight
        layer = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None).to(w)
        with torch.no_grad():
            layer.weight.copy_(w + self.scaling * (self.lora_A @ self.lora_B).t())
            if self.base.bias is not None:
                layer.bias.copy_(self.base.bias)
        return layer
