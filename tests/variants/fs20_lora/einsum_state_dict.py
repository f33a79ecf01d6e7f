"""A correct variant: einsum for the update, the scaling kept as a buffer, and the merged layer filled through
load_state_dict."""

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        base.weight.requires_grad_(False)
        if base.bias is not None:
            base.bias.requires_grad_(False)
        self.base = base
        self.lora_A = nn.Parameter(nn.init.kaiming_uniform_(torch.empty(r, base.in_features), a=math.sqrt(5)))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.register_buffer("scale", torch.tensor(float(alpha / r)))

    def forward(self, x):
        update = torch.einsum("...i,ri,or->...o", x, self.lora_A, self.lora_B)
        return self.base(x) + self.scale * update

    def merged(self):
        w = self.base.weight
        layer = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None).to(w.dtype)
        state = {"weight": (w + self.scale * self.lora_B @ self.lora_A).detach()}
        if self.base.bias is not None:
            state["bias"] = self.base.bias.detach()
        layer.load_state_dict(state)
        return layer
