"""A correct variant: tensors kept apart, worker_init_fn only with workers, a bit mask for the seed."""

import random

import numpy as np
import torch
from torch.utils import data


class ArrayDataset(data.Dataset):
    def __init__(self, features, labels, transform=None):
        if len(features) != len(labels):
            raise ValueError("features and labels differ in length")
        self.x, self.y, self.transform = torch.as_tensor(features), torch.as_tensor(labels), transform

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, idx):
        sample = self.x[idx] if self.transform is None else self.transform(self.x[idx])
        return sample, self.y[idx]


def seed_worker(worker_id):
    s = int(torch.initial_seed()) & 0xFFFFFFFF
    np.random.seed(s)
    random.seed(s)


def make_loader(dataset, batch_size, *, shuffle=True, drop_last=False, num_workers=0, seed=0, device="cpu"):
    options = dict(batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers)
    if shuffle:
        options["generator"] = torch.Generator().manual_seed(seed)
    if num_workers > 0:
        options["worker_init_fn"] = seed_worker
    if torch.device(device).type == "cuda":
        options["pin_memory"] = True
    return data.DataLoader(dataset, **options)
