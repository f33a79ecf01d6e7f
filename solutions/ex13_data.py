"""Reference solution of ex13 (a custom Dataset and a configured DataLoader)."""

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ArrayDataset(Dataset):
    def __init__(self, features: torch.Tensor, labels: torch.Tensor, transform=None):
        # Keep the data and the transform as they are: the transform runs per sample, in __getitem__.
        self.features = features
        self.labels = labels
        self.transform = transform

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, idx: int):
        x, y = self.features[idx], self.labels[idx]  # x: [F], y: a 0-d tensor, which the loader stacks into [B]
        if self.transform is not None:  # on the features only: the label is the answer, not an input
            x = self.transform(x)
        return x, y


def seed_worker(worker_id: int) -> None:
    # torch gives each worker (and each epoch) its own seed; NumPy accepts seeds below 2**32 only, and
    # `random` follows too, so that augmentations drawn with them differ per worker yet repeat per run.
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def make_loader(dataset: Dataset, batch_size: int, *, shuffle: bool = True, drop_last: bool = False,
                num_workers: int = 0, seed: int = 0, device: str = "cpu") -> DataLoader:
    # The loader's own generator, seeded once: the shuffle depends on `seed` alone, not on whatever else used
    # torch's global generator, and each epoch still draws a new order from it.
    generator = torch.Generator()
    generator.manual_seed(seed)
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        drop_last=drop_last,
        num_workers=num_workers,
        worker_init_fn=seed_worker,
        generator=generator,
        pin_memory=torch.device(device).type == "cuda",  # pinned pages speed up copies to a GPU, nothing else
    )
