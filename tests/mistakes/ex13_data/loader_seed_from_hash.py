# Mistake: seeds the loader's generator from hash() of a string: the same order within one process, another
# in the next (PYTHONHASHSEED), so a run is never reproduced.
# Expect: derived from hash() of a string
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ArrayDataset(Dataset):
    def __init__(self, features: torch.Tensor, labels: torch.Tensor, transform=None):
        self.features = features
        self.labels = labels
        self.transform = transform

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, idx: int):
        x, y = self.features[idx], self.labels[idx]
        if self.transform is not None:
            x = self.transform(x)
        return x, y


def seed_worker(worker_id: int) -> None:
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def make_loader(dataset: Dataset, batch_size: int, *, shuffle: bool = True, drop_last: bool = False,
                num_workers: int = 0, seed: int = 0, device: str = "cpu") -> DataLoader:
    generator = torch.Generator()
    generator.manual_seed(hash(f"loader-{seed}") % 2**63)  # "a seed of its own for the loader"
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        drop_last=drop_last,
        num_workers=num_workers,
        worker_init_fn=seed_worker,
        generator=generator,
        pin_memory=torch.device(device).type == "cuda",
    )
