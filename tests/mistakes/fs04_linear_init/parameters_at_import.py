# Mistake: creates its parameters on a device chosen once, at import: the GPU whenever one is available.
# Expect: when your file is imported
import math

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        # nn.Parameter registers the tensor: model.parameters() and every optimizer see it.
        self.weight = nn.Parameter(torch.empty(out_features, in_features, device=DEVICE))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features, device=DEVICE))
        else:
            # bias stays an attribute, None, so forward can test it.
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        fan_in = self.weight.shape[1]  # in_features: how many inputs each output sums
        # kaiming_uniform_ with a = sqrt(5): gain sqrt(2 / (1 + 5)) times sqrt(3 / fan_in) = 1 / sqrt(fan_in).
        bound = 1 / math.sqrt(fan_in)
        # In place and without autograd: the same Parameter objects, new values, from torch's generator.
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)  # nn.Linear: the bias bound is 1 / sqrt(fan_in) too

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # weight is [out, in]: x @ weight.T maps [..., in] to [..., out], whatever the batch dimensions.
        out = x @ self.weight.t()
        if self.bias is not None:
            out = out + self.bias
        return out
