"""A correct variant: worker_init_fn through functools.partial, random seeded with the full 64-bit seed
(random accepts any int), the device parsed with torch.device, and __getitem__ unpacking a stored pair."""

import functools
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ArrayDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        assert features.shape[0] == labels.shape[0]
        self.data = (features, labels)
        self.transform = transform

    def __len__(self):
        return self.data[0].size(0)

    def __getitem__(self, idx):
        features, labels = self.data
        x = features[idx]
        return (self.transform(x) if self.transform is not None else x), labels[idx]


def seed_worker(worker_id):
    seed = torch.initial_seed()
    random.seed(seed)
    np.random.seed(seed % 2**32)


def _init(worker_id, seeder):
    seeder(worker_id)


def make_loader(dataset, batch_size, *, shuffle=True, drop_last=False, num_workers=0, seed=0, device="cpu"):
    generator = torch.Generator()
    generator.manual_seed(seed)
    on_gpu = torch.device(device).type == "cuda"
    return DataLoader(dataset, batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers,
                      worker_init_fn=functools.partial(_init, seeder=seed_worker), generator=generator,
                      pin_memory=on_gpu)
