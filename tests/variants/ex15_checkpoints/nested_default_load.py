"""A correct variant: a nested checkpoint, a loop over the objects, and torch.load's default
weights_only (True since torch 2.6)."""

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    objects = {"model": model, "optimizer": optimizer, "scheduler": scheduler}
    torch.save({"states": {name: obj.state_dict() for name, obj in objects.items()},
                "meta": {"epoch": int(epoch)}}, path)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu"):
    checkpoint = torch.load(path, map_location=map_location)
    for name, obj in (("model", model), ("optimizer", optimizer), ("scheduler", scheduler)):
        obj.load_state_dict(checkpoint["states"][name])
    return checkpoint["meta"]["epoch"] + 1
