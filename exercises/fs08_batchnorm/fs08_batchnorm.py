"""fs08 - BatchNorm1d from scratch: batch statistics in training, running statistics in eval.

BatchNorm1d normalises each channel c of x with one mean and one variance: over the N samples of x [N, C], over
the N samples and the L positions of x [N, C, L]. In training (module.train()) it uses the statistics of the
batch itself and updates running estimates of them; in eval mode (module.eval()) it uses the running estimates.
Then it scales each channel by weight and shifts it by bias:

    y = (x - mean) / sqrt(var + eps) * weight + bias

Do not use nn.BatchNorm1d or F.batch_norm. Run `grade fs08` to check your work.
"""

import torch
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1):
        """num_features is C. Create the parameters weight [C] (ones) and bias [C] (zeros), and the buffers
        running_mean [C] (zeros), running_var [C] (ones) and num_batches_tracked (a 0-dim int64 tensor, 0)."""
        super().__init__()
        # TODO
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [N, C] or [N, C, L]; returns a tensor of the same shape.

        Training: normalise with the batch's mean and biased variance per channel; then count the batch in
        num_batches_tracked and update running_mean and running_var (with the unbiased variance):
        running = (1 - momentum) * running + momentum * batch statistic.
        A training batch with a single value per channel raises ValueError, as nn.BatchNorm1d does.
        Eval: normalise with running_mean and running_var, and change nothing.
        """
        # TODO
        raise NotImplementedError


if __name__ == "__main__":
    bn = BatchNorm1d(3)
    x = torch.randn(8, 3, 5) * 4 + 2
    y = bn(x)
    print("train: per-channel mean ~0 and std ~1:", y.mean([0, 2]), y.std([0, 2], correction=0))
    print("running_mean, running_var:", bn.running_mean, bn.running_var)
    bn.eval()
    print("eval:", bn(x[:1]).shape)
