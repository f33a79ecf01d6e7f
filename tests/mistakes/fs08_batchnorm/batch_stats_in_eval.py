# Mistake: normalises with the batch's statistics in eval mode too (only the update looks at self.training).
# Expect: uses the batch's own statistics
import torch
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        # buffers, not parameters: saved in state_dict and moved by .to(), never trained by an optimizer
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = [0] if x.dim() == 2 else [0, 2]  # every axis but the channels: N, and L for [N, C, L]
        shape = [1, -1] + [1] * (x.dim() - 2)  # a [C] vector lined up with the channels of x
        n = x.numel() // x.shape[1]  # values per channel in this batch
        if n < 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")
        mean = x.mean(dims)
        var = x.var(dims, correction=0)  # biased: the batch is normalised by its own spread
        if self.training:
            with torch.no_grad():  # running statistics are bookkeeping: no graph through them
                self.num_batches_tracked += 1
                factor = self.momentum  # the weight of the new batch
                self.running_mean.mul_(1 - factor).add_(factor * mean)
                self.running_var.mul_(1 - factor).add_(factor * var * n / (n - 1))  # unbiased estimate
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)  # eps inside the root
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
