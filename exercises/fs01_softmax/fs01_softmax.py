"""fs01 - Softmax from scratch: a softmax and a log-softmax that never overflow.

softmax(x, dim) turns scores into probabilities along `dim`: exp(x) / sum(exp(x)), each slice along `dim`
summing to 1. log_softmax(x, dim) is its log, the log-probabilities a cross-entropy needs. Both must stay
finite and right on any finite scores (rows around +1000 or -1000 too), and give probability 0 (log-probability
-inf) to masked scores of -inf. By default both work along the last dimension (dim=-1).

Write them yourself: no F.softmax, torch.softmax, x.softmax, nn.Softmax, no log_softmax in any spelling, and
no torch.logsumexp. Run `grade fs01` to check your work.
"""

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Probabilities along `dim`: a tensor of x's shape and dtype whose slices along `dim` sum to 1.

    x: any shape (one row [1, C], a size-1 or an empty batch dimension included); float32, float16 or bfloat16.
    """
    # TODO: exp(x) overflows float32 once x > 88. What can you subtract from x without changing the result?
    raise NotImplementedError


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Log-probabilities along `dim`: a tensor of x's shape and dtype, log(softmax(x, dim)) computed stably."""
    # TODO: the log of a probability that underflowed to 0 is -inf. Never take the log of a probability.
    raise NotImplementedError


if __name__ == "__main__":
    x = torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1002.0], [0.0, -200.0, float("-inf")]])
    print("softmax:", softmax(x, dim=-1))  # rows 0 and 1: [0.665, 0.245, 0.090]; row 2: [1, 0, 0]
    print("log_softmax:", log_softmax(x, dim=-1))  # rows 0 and 1: [-0.408, -1.408, -2.408]; row 2: [0, -200, -inf]
