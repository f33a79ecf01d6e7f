# Mistake: softmax as the exp of torch's own log_softmax, which the statement forbids as well.
# Expect: torch's own `log_softmax`

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.log_softmax(x, dim).exp()


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.log(softmax(x, dim))
