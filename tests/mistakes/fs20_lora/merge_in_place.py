# Mistake: folds the update into the base Linear's own weight and returns the base.
# Expect: changed the base Linear's weight in place

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
        with torch.no_grad():
            self.base.weight += self.scaling * self.lora_B @ self.lora_A
        return self.base
