# Mistake: keeps only the file name of the path it is given (os.path.basename), so a checkpoint meant for a folder lands beside it.
# Expect: no file at

import os

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch: int) -> None:
    torch.save({
        "epoch": epoch,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "scheduler_state_dict": scheduler.state_dict(),
    }, os.path.basename(path))


def load_checkpoint(path, model, optimizer, scheduler, map_location="cpu") -> int:
    checkpoint = torch.load(path, map_location=map_location, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    scheduler.load_state_dict(checkpoint["scheduler_state_dict"])
    return checkpoint["epoch"] + 1
