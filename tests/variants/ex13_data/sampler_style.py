"""A correct variant: explicit samplers, a list of samples, `if self.transform:`, startswith for CUDA."""

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler


class ArrayDataset(Dataset):
    def __init__(self, features, labels, transform=None):
        self.samples = list(zip(features, labels))
        self.transform = transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        x, y = self.samples[idx]
        if self.transform:
            x = self.transform(x)
        return x, y


def seed_worker(worker_id):
    seed = torch.initial_seed() % (2 ** 32)
    random.seed(seed)
    np.random.seed(seed)


def make_loader(dataset, batch_size, *, shuffle=True, drop_last=False, num_workers=0, seed=0, device="cpu"):
    if shuffle:
        sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(seed))
    else:
        sampler = SequentialSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=drop_last,
                      num_workers=num_workers, worker_init_fn=seed_worker,
                      pin_memory=str(device).startswith("cuda"))
