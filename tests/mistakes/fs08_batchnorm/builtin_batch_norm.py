# Mistake: keeps the buffers but lets F.batch_norm compute the normalisation and the running update.
# Expect: calls torch's own
import torch
import torch.nn.functional as F
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        factor = 0.0
        if self.training:
            self.num_batches_tracked += 1
            factor = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training, factor,
                            self.eps)
