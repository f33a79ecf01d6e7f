"""Reference solution of fs20 (a LoRA linear layer: frozen base, trainable low-rank A and B, merge)."""

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)  # frozen: no gradient, nothing for an optimizer to change
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))  # random: B's gradient depends on A
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))  # zeros: the layer starts as the base
        self.scaling = alpha / r

    def forward(self, x):
        # x @ A^T is [..., r]: the low-rank path never builds the [out, in] matrix B @ A
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling

    def merged(self):
        w = self.base.weight
        layer = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None).to(w)  # base's dtype, device
        with torch.no_grad():  # a new layer: the base and this layer keep their own weights
            layer.weight.copy_(w + self.scaling * self.lora_B @ self.lora_A)
            if self.base.bias is not None:
                layer.bias.copy_(self.base.bias)
        return layer
