"""ex13 - Data: a custom Dataset and a well-configured DataLoader.

Write `ArrayDataset` (a map-style Dataset over two tensors, with an optional transform),
`seed_worker` (seeds the other libraries' random generators inside each DataLoader worker)
and `make_loader` (a DataLoader configured from its arguments). Run `grade ex13` to check your work.
"""

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ArrayDataset(Dataset):
    """Samples (features[i], labels[i]); `transform`, if given, is applied to the features only.

    features: a tensor [N, F]; labels: a tensor [N] of integer class labels.
    """

    def __init__(self, features: torch.Tensor, labels: torch.Tensor, transform=None):
        # TODO: keep what __len__ and __getitem__ need.
        raise NotImplementedError

    def __len__(self) -> int:
        # TODO: the number of samples.
        raise NotImplementedError

    def __getitem__(self, idx: int):
        # TODO: return (x, y) for sample idx, with the transform applied to x (if there is one).
        raise NotImplementedError


def seed_worker(worker_id: int) -> None:
    """worker_init_fn: seed Python's `random` and NumPy in a DataLoader worker.

    PyTorch seeds each worker's torch generator (torch.initial_seed() differs per worker and per
    epoch); make `random` and `np.random` follow it.
    """
    # TODO
    raise NotImplementedError


def make_loader(dataset: Dataset, batch_size: int, *, shuffle: bool = True, drop_last: bool = False,
                num_workers: int = 0, seed: int = 0, device: str = "cpu") -> DataLoader:
    """A DataLoader over `dataset`.

    - batches of `batch_size`; `drop_last` drops the last incomplete batch;
    - with `shuffle`, a new order every epoch, reproducible from `seed` alone;
    - `num_workers` worker processes, each started with `seed_worker`;
    - pinned memory only when the batches go to a CUDA `device`.
    """
    # TODO
    raise NotImplementedError


if __name__ == "__main__":
    x, y = torch.randn(10, 3), torch.arange(10) % 2
    data = ArrayDataset(x, y, transform=lambda v: v * 2)
    print(len(data), data[0])
    for xb, yb in make_loader(data, 4, seed=1):
        print(xb.shape, yb)
