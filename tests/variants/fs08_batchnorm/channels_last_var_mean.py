# Correct: channels moved last and flattened to [n, C], torch.var_mean, lerp_ for the running update.
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
        rows = x.movedim(1, -1).reshape(-1, x.shape[1])  # [n, C]: every value of a channel in one column
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            n = rows.shape[0]
            if n <= 1:
                raise ValueError("one value per channel: no variance to normalise with")
            var, mean = torch.var_mean(rows, dim=0, unbiased=False)
            with torch.no_grad():  # running statistics are bookkeeping: no graph through them
                self.num_batches_tracked += 1
                factor = self.momentum  # the weight of the new batch
                self.running_mean.lerp_(mean, factor)
                self.running_var.lerp_(var * (n / (n - 1)), factor)
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)  # eps inside the root
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
