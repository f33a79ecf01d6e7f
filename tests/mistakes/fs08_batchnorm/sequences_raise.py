# Mistake: the statistics over N only: right on [N, C], raises on a sequence [N, C, L] (the [C] vectors do not
# broadcast against L); its gradients are not judged on a forward that raised (no "graph cut").
# Expect: raised RuntimeError
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
        dims = [0]  # [N, C] only: a sequence [N, C, L] keeps its L axis, and [C] vectors do not line up
        shape = [-1]
        if self.training:
            n = x.numel() // x.shape[1]  # values per channel in this batch
            if n < 2:
                raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")
            mean = x.mean(dims)
            var = x.var(dims, correction=0)  # biased: the batch is normalised by its own spread
            with torch.no_grad():  # running statistics are bookkeeping: no graph through them
                self.num_batches_tracked += 1
                factor = self.momentum  # the weight of the new batch
                self.running_mean.mul_(1 - factor).add_(factor * mean)
                self.running_var.mul_(1 - factor).add_(factor * var * n / (n - 1))  # unbiased estimate
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
