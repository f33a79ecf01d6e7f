"""A correct variant: pathlib, the next epoch stored in the file, positional map_location, explicit
keys per object, and the epoch kept as a tensor."""

from pathlib import Path

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    state = {
        "next_epoch": torch.tensor(epoch + 1),
        "weights": model.state_dict(),
        "optim": optimizer.state_dict(),
        "sched": scheduler.state_dict(),
    }
    with Path(path).open("wb") as f:
        torch.save(state, f)


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu"):
    state = torch.load(Path(path), map_location, weights_only=True)
    model.load_state_dict(state["weights"], strict=True)
    optimizer.load_state_dict(state["optim"])
    scheduler.load_state_dict(state["sched"])
    return int(state["next_epoch"])
